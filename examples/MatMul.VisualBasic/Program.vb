' The PMPI paper's sample in Visual Basic: rank 0 is the master, every other rank a worker; the other ranks may be
' MatMul.CSharp or MatMul.FSharp, which speak the same protocol (see MatMul.vb).
' Run: dotnet run --project examples/MatMul.VisualBasic -- --pmpi-ranks 3 [rows cols columnsOfB] [--label text]
Imports Pmpi.VisualBasic

Module Program
    Sub Main(args As String())
        Mpi.Run(args,
            Sub(world)
                Dim label As String = Nothing
                Dim sizes = MatMul.ParseArguments(args, label)
                If world.Rank <> 0 Then
                    MatMul.Worker(world, If(label, "Visual Basic"))
                    Return
                End If
                Dim result = MatMul.Master(world, sizes(0), sizes(1), sizes(2))
                For Each line In result.Report("Visual Basic")
                    Console.WriteLine(line)
                Next
                If result.MaxError > MatMul.Tolerance Then world.Abort(3)
            End Sub)
    End Sub
End Module
