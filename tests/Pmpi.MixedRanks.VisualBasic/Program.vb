' The collectives of MixedLanguageTests as a Visual Basic programmer writes them: ReduceOperation by name, lambdas,
' ByRef broadcasts. The C# and F# programs beside it make the same calls in their idioms.
Imports Pmpi.VisualBasic

Module Program

    Sub Main(args As String())
        Mpi.Run(args,
            Sub(world)
                Dim rank = world.Rank, size = world.Size
                If args.Length = 1 AndAlso args(0) = "mismatch" Then
                    world.Allreduce(New Double(262143) {}, Function(a, b) a - b)
                    Throw New InvalidOperationException("The mismatched allreduce returned.")
                End If
                Dim checks = 0
                Dim check =
                    Sub(got As Double(), expected As Func(Of Integer, Double), what As String, n As Integer)
                        For i = 0 To got.Length - 1
                            If got(i) <> expected(i) Then Throw New InvalidOperationException($"Visual Basic rank {rank}: {what} of {n} elements: element {i} is {got(i)}, expected {expected(i)}.")
                        Next
                        checks += 1
                    End Sub
                For Each n In {1, 1000, 131072, 524288}
                    Dim mine = Enumerable.Range(0, n).Select(Function(i) CDbl((i Mod 97) * (rank + 1))).ToArray()
                    check(world.Allreduce(mine, Function(a, b) a + b), Function(i) (i Mod 97) * (size * (size + 1) \ 2), "sum", n)
                    check(world.Allreduce(mine, ReduceOperation.Max), Function(i) (i Mod 97) * size, "max", n)
                    Dim ownValues = Enumerable.Range(0, n).Select(Function(i) CDbl((i + rank) Mod 3)).ToArray()
                    check(world.Allreduce(ownValues, Function(a, b) a + b + a * b), Function(i) Own(i, size), "user operation", n)
                    Dim root = n Mod size
                    Dim reduced = world.Reduce(mine, ReduceOperation.Sum, root)
                    If rank = root Then check(reduced, Function(i) (i Mod 97) * (size * (size + 1) \ 2), "reduce", n)
                    Dim common(n - 1) As Double
                    world.Broadcast(common, 0)
                    check(common, Function(i) i * 0.5, "broadcast", n)
                Next
                check({CDbl(world.Allreduce(rank + 1, ReduceOperation.Sum))}, Function(i) size * (size + 1) \ 2, "scalar sum", 1)
                check({world.Allreduce(rank * 1.5, Function(a, b) Math.Max(a, b))}, Function(i) (size - 1) * 1.5, "scalar max", 1)
                check({CDbl(world.Allreduce(CLng(rank Mod 2), Function(a, b) a + b + a * b))}, Function(i) (1L << (size \ 2)) - 1, "scalar user operation", 1)
                ' Nonblocking, persistent and neighbourhood calls, each rank in its own language's form.
                Dim big = Enumerable.Range(0, 524288).Select(Function(i) CDbl((i Mod 97) * (rank + 1))).ToArray()
                Dim pending = world.ImmediateAllreduce(big, ReduceOperation.Sum)
                Dim computed = 0.0
                For i = 0 To 100000
                    computed += Math.Sqrt(i)
                Next
                check(pending.Value, Function(i) (i Mod 97) * (size * (size + 1) \ 2), "nonblocking sum", big.Length)
                Dim halves(999) As Double
                world.ImmediateBroadcast(halves, 0).Wait()
                check(halves, Function(i) i * 0.5, "nonblocking broadcast", 1000)
                Dim round = {0.0}
                Dim highest = world.PersistentAllreduce(round, ReduceOperation.Max)
                For r = 1 To 3
                    round(0) = rank * r
                    highest.Start()
                    highest.Wait()
                    Dim expected = (size - 1) * r
                    check(highest.Value, Function(i) expected, "persistent max", 1)
                Next
                Using ring As New Pmpi.CartesianCommunicator(world, 1, {size}, {True}, False)
                    Dim halo = ring.NeighborAlltoall({rank * 10, rank * 10 + 1})
                    check(halo.Select(Function(v) CDbl(v)).ToArray(), Function(slot) If(slot = 0, ((rank + size - 1) Mod size) * 10 + 1, ((rank + 1) Mod size) * 10), "neighbours", 2)
                End Using
                Console.WriteLine($"Visual Basic rank {rank}: {checks} checks passed")
            End Sub)
    End Sub

    ' Every rank's (i + rank) Mod 3 combined by a + b + ab: the product of (1 + each) less one.
    Private Function Own(i As Integer, size As Integer) As Double
        Dim product = 1.0
        For r = 0 To size - 1
            product *= 1 + (i + r) Mod 3
        Next
        Return product - 1
    End Function

End Module
