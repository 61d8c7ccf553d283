Public Class CollectiveTests

    <Fact>
    Public Sub Allreduce_SumByName_AddsEveryRank()
        Dim sums = Job.RunRanks(4, Function(world) world.Allreduce(world.Rank + 1, ReduceOperation.Sum))

        Assert.Equal(New Integer() {10, 10, 10, 10}, sums)
    End Sub

    <Fact>
    Public Sub Reduce_VisualBasicLambda_CombinesInRankOrderAtRoot()
        Dim joined = Job.RunRanks(3, Function(world) world.Reduce(CStr(world.Rank), Function(a, b) a & "," & b, 0))

        Assert.Equal(New String() {"0,1,2", Nothing, Nothing}, joined)
    End Sub

    <Fact>
    Public Sub Allreduce_MaxOfArrays_ElementwiseOnEveryRank()
        Dim maxima = Job.RunRanks(3, Function(world) world.Allreduce(New Double() {world.Rank, -world.Rank}, ReduceOperation.Max))

        Assert.All(maxima, Sub(m) Assert.Equal(New Double() {2, 0}, m))
    End Sub

    ''' <summary>
    ''' A Visual Basic lambda that sums names the predefined sum, so its ranks and ranks that pass ReduceOperation.Sum take
    ''' one algorithm: an array of 2 MB goes by blocks on all four (it hung when the lambda's ranks took another).
    ''' </summary>
    <Fact>
    Public Sub Allreduce_LambdaBesideSumByName_OneAlgorithmAndTheSerialResult()
        Const Length = 262144
        Dim sums = Job.RunRanks(4,
            Function(world)
                Dim values = Enumerable.Range(0, Length).Select(Function(i) CDbl((i Mod 97) * (world.Rank + 1))).ToArray()
                If world.Rank Mod 2 = 0 Then Return world.Allreduce(values, ReduceOperation.Sum)
                Return world.Allreduce(values, Function(a, b) a + b)
            End Function)

        Dim expected = Enumerable.Range(0, Length).Select(Function(i) CDbl((i Mod 97) * 10)).ToArray()
        Assert.All(sums, Sub(s) Assert.Equal(expected, s))
    End Sub

    ''' <summary>
    ''' Allreduce into a caller's array, blocking or not, by name or by lambda, fills it on every rank, in place too (a
    ''' nonblocking one's value is that array): an array of 2 MB goes by blocks on all four.
    ''' </summary>
    <Fact>
    Public Sub Allreduce_IntoOwnArrayBlockingAndNotByNameAndLambda_FilledWithTheSerialResult()
        Const Length = 262144
        Dim results = Job.RunRanks(4,
            Function(world)
                Dim values = Enumerable.Range(0, Length).Select(Function(i) CDbl((i Mod 97) * (world.Rank + 1))).ToArray()
                Dim result = If(world.Rank = 1, values, New Double(Length - 1) {})
                Select Case world.Rank
                    Case 0 : world.Allreduce(values, ReduceOperation.Sum, result)
                    Case 1 : world.Allreduce(values, Function(a, b) a + b, result)
                    Case 2 : Assert.Same(result, world.ImmediateAllreduce(values, ReduceOperation.Sum, result).Value)
                    Case Else : Assert.Same(result, world.ImmediateAllreduce(values, Function(a, b) a + b, result).Value)
                End Select
                Return result
            End Function)

        Dim expected = Enumerable.Range(0, Length).Select(Function(i) CDbl((i Mod 97) * 10)).ToArray()
        Assert.All(results, Sub(r) Assert.Equal(expected, r))
    End Sub

    <Fact>
    Public Sub Allreduce_IntoAResultOfAnotherLength_FailsNamingRankAndBothLengths()
        Dim errors = Job.RunRanks(2,
            Function(world)
                Try
                    world.Allreduce(New Integer() {1, 2, 3}, ReduceOperation.Sum, New Integer(If(world.Rank = 1, 1, 3)) {})
                    Return ""
                Catch e As MpiException
                    Return e.Message
                End Try
            End Function)

        Assert.Contains("rank 0's result array holds 4 elements; its values, 3", errors(0))
        Assert.Contains("rank 1's result array holds 2 elements; its values, 3", errors(1))
    End Sub

    ''' <summary>
    ''' Lambdas name the predefined operations they compute, as Visual Basic compiles them in a debug build too (the
    ''' result through a local): ranks that pass Math.Max or a sum beside ReduceOperation's agree, where an operation
    ''' of the user's would fail the collective as a mismatch.
    ''' </summary>
    <Fact>
    Public Sub Allreduce_MathMaxAndSumLambdasBesideReduceOperations_AgreeOnTheOperation()
        Dim results = Job.RunRanks(4,
            Function(world)
                Dim value = world.Rank * 1.5
                If world.Rank Mod 2 = 0 Then Return (world.Allreduce(value, ReduceOperation.Max), world.Allreduce(world.Rank, ReduceOperation.Sum))
                Return (world.Allreduce(value, Function(a, b) Math.Max(a, b)), world.Allreduce(world.Rank, Function(a, b) a + b))
            End Function)

        Assert.All(results, Sub(r) Assert.Equal((4.5, 6), r))
    End Sub

    ''' <summary>Mpi.Run with a Function returns what it returned, the lowest rank's where the ranks are threads here: Main's exit code.</summary>
    <Fact>
    Public Sub Run_FunctionReturnsAnExitCode_RunReturnsTheLowestRanksValue()
        Dim args = {"--pmpi-ranks", "3", "left"}
        Dim code = Mpi.Run(args, Function(world) If(args.SequenceEqual({"left"}), 40 + world.Rank, -1))

        Assert.Equal(40, code)
    End Sub

    ''' <summary>TryReduce tells the root's result, even 0, from the other ranks' none; TryExclusiveScan rank 0's none likewise.</summary>
    <Fact>
    Public Sub TryReduceAndTryExclusiveScan_ResultOnlyWhereThereIsOne()
        Dim results = Job.RunRanks(3,
            Function(world)
                Dim sum = -1, product = -1L, before = -1
                Dim hasSum = world.TryReduce(world.Rank - 1, ReduceOperation.Sum, 2, sum)
                Dim hasProduct = world.TryReduce(CLng(world.Rank + 2), Function(a, b) a * b, 0, product)
                Dim hasBefore = world.TryExclusiveScan(world.Rank + 1, ReduceOperation.Sum, before)
                Return (hasSum, sum, hasProduct, product, hasBefore, before)
            End Function)

        Assert.Equal((False, -1, True, 24L, False, -1), results(0))
        Assert.Equal((False, -1, False, -1L, True, 1), results(1))
        Assert.Equal((True, 0, False, -1L, True, 3), results(2))
    End Sub

    <Fact>
    Public Sub Broadcast_ByRefClass_EveryRankGetsRootsParticle()
        Dim particles = Job.RunRanks(3,
            Function(world)
                Dim particle = If(world.Rank = 1, New Particle With {.Name = "root", .Position = {1, 2, 3}, .Charge = 5}, Nothing)
                world.Broadcast(particle, 1)
                Return particle
            End Function)

        Assert.All(particles, Sub(p) Assert.Equal(("root", 5, 3.0), (p.Name, p.Charge, p.Position(2))))
    End Sub

End Class
