' A token goes around the ring of ranks [laps] times, each rank adding one. Rank 0 starts it and checks the count.
' Run: dotnet run --project examples/Ring.VisualBasic -- --pmpi-ranks 4 [laps]
Imports System.Globalization
Imports Pmpi.VisualBasic

Module Program
    Sub Main(args As String())
        Mpi.Run(args,
            Sub(world)
                Dim laps = If(args.Length > 0, Integer.Parse(args(0), CultureInfo.InvariantCulture), 3)
                Dim nextRank = (world.Rank + 1) Mod world.Size, previousRank = (world.Rank + world.Size - 1) Mod world.Size
                Dim token = 0
                For lap = 1 To laps
                    If world.Rank = 0 Then
                        world.Send(token + 1, nextRank, 0)
                        world.Receive(previousRank, 0, token)
                    Else
                        world.Receive(previousRank, 0, token)
                        world.Send(token + 1, nextRank, 0)
                    End If
                Next
                If world.Rank = 0 Then
                    Console.WriteLine($"The token went {laps} times around {world.Size} ranks (Visual Basic): {token}, expected {laps * world.Size}")
                End If
            End Sub)
    End Sub
End Module
