Public Class NonblockingCollectiveTests

    Private Const ByBlocks = 262144 ' 2 MB of doubles: an allreduce by blocks at 4 ranks

    <Fact>
    Public Sub ImmediateAllreduce_SumByNameAndLambda_AddsEveryRank()
        Dim sums = Job.RunRanks(4,
            Function(world)
                Dim byName = world.ImmediateAllreduce(world.Rank + 1, ReduceOperation.Sum)
                Dim byLambda = world.ImmediateAllreduce(world.Rank + 1, Function(a, b) a + b)
                Return (byName.Value, byLambda.Value)
            End Function)

        Assert.All(sums, Sub(s) Assert.Equal((10, 10), s))
    End Sub

    ''' <summary>
    ''' Ranks passing ReduceOperation.Sum, a lambda and a Func variable (which takes the binding's extension rather than
    ''' Pmpi.Core's method) take one algorithm: 2 MB go by blocks on all four and give the serial sum.
    ''' </summary>
    <Fact>
    Public Sub ImmediateAllreduce_2MBByNameBesideLambdas_OneAlgorithmAndTheSerialSum()
        Dim sums = Job.RunRanks(4,
            Function(world)
                Dim values = Enumerable.Range(0, ByBlocks).Select(Function(i) CDbl((i Mod 97) * (world.Rank + 1))).ToArray()
                Dim add As Func(Of Double, Double, Double) = Function(a, b) a + b
                Select Case world.Rank
                    Case 0, 1 : Return world.ImmediateAllreduce(values, ReduceOperation.Sum).Value
                    Case 2 : Return world.ImmediateAllreduce(values, Function(a, b) a + b).Value
                    Case Else : Return world.ImmediateAllreduce(values, add).Value
                End Select
            End Function)

        Dim expected = Enumerable.Range(0, ByBlocks).Select(Function(i) CDbl((i Mod 97) * 10)).ToArray()
        Assert.All(sums, Sub(s) Assert.Equal(expected, s))
    End Sub

    <Fact>
    Public Sub ImmediateReduceAndScan_WhatTheBlockingFormsGive()
        Dim results = Job.RunRanks(3,
            Function(world)
                Dim multiply As Func(Of Long, Long, Long) = Function(a, b) a * b
                Dim sum = world.ImmediateReduce(world.Rank + 1, ReduceOperation.Sum, 2)
                Dim product = world.ImmediateReduce(CLng(world.Rank + 2), multiply, 0)
                Dim maxima = world.ImmediateReduce(New Double() {world.Rank, -world.Rank}, ReduceOperation.Max, 1)
                Dim joined = world.ImmediateReduce(New String() {CStr(world.Rank)}, Function(a, b) a & b, 0)
                Dim prefix = world.ImmediateScan(world.Rank + 1, ReduceOperation.Sum)
                Return (Immediate:=(sum.Value, product.Value, prefix.Value, maxima.Value, joined.Value),
                        Blocking:=(world.Reduce(world.Rank + 1, ReduceOperation.Sum, 2), world.Reduce(CLng(world.Rank + 2), multiply, 0),
                                   world.Scan(world.Rank + 1, ReduceOperation.Sum),
                                   world.Reduce(New Double() {world.Rank, -world.Rank}, ReduceOperation.Max, 1),
                                   world.Reduce(New String() {CStr(world.Rank)}, Function(a, b) a & b, 0)))
            End Function)

        For Each r In results
            Assert.Equal((r.Blocking.Item1, r.Blocking.Item2, r.Blocking.Item3), (r.Immediate.Item1, r.Immediate.Item2, r.Immediate.Item3))
            Assert.Equal(r.Blocking.Item4, r.Immediate.Item4)
            Assert.Equal(r.Blocking.Item5, r.Immediate.Item5)
        Next
        Assert.Equal({(0, 24L, 1), (0, 0L, 3), (6, 0L, 6)}, results.Select(Function(r) (r.Immediate.Item1, r.Immediate.Item2, r.Immediate.Item3)))
        Assert.Equal({Nothing, New Double() {2, 0}, Nothing}, results.Select(Function(r) r.Immediate.Item4))
        Assert.Equal({New String() {"012"}, Nothing, Nothing}, results.Select(Function(r) r.Immediate.Item5))
    End Sub

    ''' <summary>ImmediateTryReduce tells the root's result, even 0, from the other ranks' none, as TryReduce does.</summary>
    <Fact>
    Public Sub ImmediateTryReduce_ResultOnlyAtTheRoot()
        Dim results = Job.RunRanks(3,
            Function(world)
                Dim sum = world.ImmediateTryReduce(world.Rank - 1, ReduceOperation.Sum, 2)
                Dim product = world.ImmediateTryReduce(CLng(world.Rank + 2), Function(a, b) a * b, 0)
                Dim total = -1, multiplied = -1L
                Return (sum.TryGetValue(total), total, product.TryGetValue(multiplied), multiplied)
            End Function)

        Assert.Equal((False, -1, True, 24L), results(0))
        Assert.Equal((False, -1, False, -1L), results(1))
        Assert.Equal((True, 0, False, -1L), results(2))
    End Sub

    ''' <summary>
    ''' Each rank starts the allreduce, then computes, looking at the request between steps (its Test on even ranks, its
    ''' WaitAsync task on odd ones) and making no MPI call: only progress apart from the rank's calls completes it.
    ''' Rank 0 starts last, so the others are computing when it joins. Should progress need a call, the loop ends at its
    ''' deadline and the test fails on its flag, not by a hang.
    ''' </summary>
    <Fact>
    Public Sub ImmediateAllreduce_CompletesWhileTheRankComputes()
        Dim results = Job.RunRanks(4,
            Function(world)
                If world.Rank = 0 Then System.Threading.Thread.Sleep(100)
                Dim sum = world.ImmediateAllreduce(world.Rank + 1.0, ReduceOperation.Sum)
                Dim task = sum.WaitAsync()
                Dim completed As Func(Of Boolean) = Function() If(world.Rank Mod 2 = 0, sum.Test() IsNot Nothing, task.IsCompleted)
                Dim deadline = Date.UtcNow + Job.Timeout / 2
                Dim steps = 0, work = 0.0
                While Not completed() AndAlso Date.UtcNow < deadline
                    For i = 0 To 999
                        work += Math.Sqrt(i + work Mod 7)
                    Next
                    steps += 1
                End While
                Return (Completed:=completed(), Steps:=steps, Sum:=sum.Value)
            End Function)

        Assert.All(results, Sub(r) Assert.True(r.Completed, "The allreduce did not complete while the rank computed."))
        Assert.All(results, Sub(r) Assert.Equal(10.0, r.Sum))
        Assert.True(results.Skip(1).All(Function(r) r.Steps > 0), "The later ranks computed before the allreduce completed.")
    End Sub

End Class
