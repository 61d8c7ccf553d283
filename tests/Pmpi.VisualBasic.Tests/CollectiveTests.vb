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
