' Every rank says hello. Run: dotnet run --project examples/Hello.VisualBasic -- --pmpi-ranks 4
Imports Pmpi.VisualBasic

Module Program
    Sub Main(args As String())
        Mpi.Run(args, Sub(world) Console.WriteLine($"Hello from rank {world.Rank} of {world.Size} on {Mpi.ProcessorName} (Visual Basic)"))
    End Sub
End Module
