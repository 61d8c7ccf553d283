' Computes pi by integrating 4 / (1 + x²) over [0, 1]: each rank sums every size-th strip, then Reduce adds the parts.
' Run: dotnet run --project examples/Pi.VisualBasic -- --pmpi-ranks 4 [strips]
Imports System.Globalization
Imports Pmpi.VisualBasic

Module Program
    Sub Main(args As String())
        Mpi.Run(args,
            Sub(world)
                Dim strips = If(args.Length > 0, Long.Parse(args(0), CultureInfo.InvariantCulture), 50_000_000L)
                world.Broadcast(strips, 0)

                Dim start = Mpi.Time
                Dim width = 1.0 / strips, sum = 0.0
                For i = CLng(world.Rank) To strips - 1 Step world.Size
                    Dim x = (i + 0.5) * width
                    sum += 4.0 / (1.0 + x * x)
                Next
                Dim pi = world.Reduce(sum * width, ReduceOperation.Sum, 0)

                If world.Rank = 0 Then
                    Console.WriteLine($"pi ≈ {pi:F12} (error {Math.Abs(pi - Math.PI):E2}) from {strips:N0} strips on {world.Size} ranks in {Mpi.Time - start:F3} s (Visual Basic)")
                End If
            End Sub)
    End Sub
End Module
