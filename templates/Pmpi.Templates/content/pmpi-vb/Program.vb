' Run as 4 processes: pmpi run -n 4 bin/Debug/net10.0/PmpiJob.dll (the pmpi tool: dotnet tool install --global Pmpi.Cli)
' or as 4 threads of one process: dotnet run -- --pmpi-ranks 4
Imports Pmpi.VisualBasic

Module Program
    Sub Main(args As String())
        Mpi.Run(args,
            Sub(world)
                Console.WriteLine($"Hello from rank {world.Rank} of {world.Size} on {Mpi.ProcessorName}")

                ' Every rank contributes its rank and every rank receives the sum: 0 + 1 + ... + (size - 1).
                Dim sum = world.Allreduce(world.Rank, ReduceOperation.Sum)
                If world.Rank = 0 Then Console.WriteLine($"The ranks add up to {sum}")
            End Sub)
    End Sub
End Module
