Imports Pmpi.FSharp

''' <summary>Visual Basic values crossing ranks written in C# and F# (from the Pmpi.Polyglot assemblies) in one job.</summary>
Public Class TransportTests

    <Fact>
    Public Sub Send_ClassToCSharpRank_ComesBackNudged()
        Dim replies = Job.RunRanks(2,
            Function(world)
                If world.Rank = 1 Then
                    CSharpRanks.Nudge(world, 0, 4)
                    Return Nothing
                End If
                world.Send(New Particle With {.Name = "proton", .Position = {0.5, 1, 2}, .Charge = 1}, 1, 4)
                Dim reply As Particle = Nothing
                world.Receive(1, 4, reply)
                Return reply
            End Function)

        Assert.Equal(("proton (C#)", -1), (replies(0).Name, replies(0).Charge))
        Assert.Equal(New Double() {1.5, 2, 3}, replies(0).Position)
    End Sub

    <Fact>
    Public Sub Send_StructuresToCSharpRank_ComeBackDoubled()
        Dim replies = Job.RunRanks(2,
            Function(world)
                If world.Rank = 1 Then
                    CSharpRanks.Double(world, 0, 6)
                    Return ""
                End If
                world.Send(New Sample With {.Label = "ab", .Value = 1.25}, 1, 6)
                world.Send(New Point3 With {.X = 1, .Y = 2, .Z = 3}, 1, 6)
                Dim sample As New Sample, point As New Point3
                world.Receive(1, 6, sample)
                world.Receive(1, 6, point)
                Return $"{sample.Label} {sample.Value} {point.X} {point.Y} {point.Z}"
            End Function)

        Assert.Equal("abab 2.5 2 4 6", replies(0))
    End Sub

    <Fact>
    Public Sub Send_FSharpRecordToFSharpRank_ComesBackOlder()
        Dim replies = Job.RunRanks(2,
            Function(world)
                If world.Rank = 0 Then
                    FSharpRanks.birthday(1, 2, world)
                    Return Nothing
                End If
                world.Send(New Person("Alan", 41, Microsoft.FSharp.Collections.ListModule.OfArray({"VB"})), 0, 2)
                Dim reply As Person = Nothing
                world.Receive(0, 2, reply)
                Return reply
            End Function)

        Assert.Equal(("Alan", 42, "F#,VB"), (replies(1).Name, replies(1).Age, String.Join(",", replies(1).Languages)))
    End Sub

    <Fact>
    Public Sub Send_FSharpUnionToFSharpRank_AreaComesBack()
        Dim areas(1) As Double
        Environment.Run(2,
            Sub(world)
                If world.Rank = 0 Then
                    FSharpRanks.area(1, 3, world)
                Else
                    world.Send(Shape.NewRectangle(2, 3.5), 0, 3)
                    world.Receive(0, 3, areas(1))
                End If
            End Sub, FSharpPayloadSerializer.Options(Job.Timeout))

        Assert.Equal(7.0, areas(1))
    End Sub

End Class
