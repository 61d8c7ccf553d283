/// F# values crossing ranks written in other languages of one job (the C# ranks come from Pmpi.Polyglot.CSharp).
module Pmpi.FSharp.Tests.TransportTests

open Xunit
open Pmpi.FSharp
open Pmpi.Polyglot

[<Fact>]
let ``Send_RecordToCSharpRank_ComesBackOlderWithCSharpAdded`` () =
    let replies =
        Job.run 2 (fun world ->
            if Mpi.rank world = 0 then
                world |> Mpi.send 1 1 { Name = "Ada"; Age = 36; Languages = [ "F#"; "VB" ] }
                Some(world |> Mpi.recv<Person> 1 1)
            else
                CSharpRanks.Birthday(world, 0, 1)
                None)
    Assert.Equal(Some { Name = "Ada"; Age = 37; Languages = [ "C#"; "F#"; "VB" ] }, replies[0])

[<Theory>]
[<InlineData(0)>]
[<InlineData(1)>]
[<InlineData(2)>]
let ``Send_UnionCaseToCSharpRank_ComesBackEnlarged`` (case: int) =
    let shape, expected = [| Circle 1.5, Circle 3.0; Rectangle(2.0, 0.5), Rectangle(4.0, 1.0); Empty, Empty |][case]
    let replies =
        Job.run 2 (fun world ->
            if Mpi.rank world = 1 then
                world |> Mpi.send 0 9 shape
                Some(world |> Mpi.recv<Shape> 0 9)
            else
                CSharpRanks.Enlarge(world, 1, 9)
                None)
    Assert.Equal(Some expected, replies[1])

[<Fact>]
let ``Send_RecursiveUnionAndOptionsBetweenFSharpRanks_ArriveEqual`` () =
    let tree = Node(Leaf 1, Node(Leaf 2, Leaf 3))
    let value: Tree * Shape option list * Map<string, Shape> * Result<int, string> = tree, [ Some Empty; None ], Map.ofList [ "a", Circle 1.0 ], Ok 5
    let received =
        Job.run 2 (fun world ->
            if Mpi.rank world = 0 then world |> Mpi.send 1 0 value; None
            else Some(world |> Mpi.recv<Tree * Shape option list * Map<string, Shape> * Result<int, string>> 0 0))
    Assert.Equal(Some value, received[1])

[<Fact>]
let ``Send_RecordToFSharpRankOfAnotherAssembly_ComesBackWithFSharpAdded`` () =
    let replies =
        Job.run 2 (fun world ->
            if Mpi.rank world = 0 then
                world |> Mpi.send 1 2 { Name = "Grace"; Age = 85; Languages = [] }
                Some(world |> Mpi.recv<Person> 1 2)
            else
                FSharpRanks.birthday 0 2 world
                None)
    Assert.Equal(Some { Name = "Grace"; Age = 86; Languages = [ "F#" ] }, replies[0])
