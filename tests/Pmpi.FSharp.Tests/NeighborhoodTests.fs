module Pmpi.FSharp.Tests.NeighborhoodTests

open Xunit
open Pmpi.FSharp

/// On a periodic ring a rank's slots are its down then its up neighbour; on a ring of 2 one rank is both, and the
/// slots still pair: the down slot gets what the down neighbour sent up.
[<Theory>]
[<InlineData(2)>]
[<InlineData(3)>]
let ``NeighborAlltoall_OnAPeriodicRing_DownSlotGetsWhatTheDownNeighbourSentUp`` (size: int) =
    let results =
        Job.run size (fun world ->
            use ring = world |> Mpi.cartesian [| size |] [| true |] false
            let sent = [| 10 * Mpi.rank ring; 10 * Mpi.rank ring + 1 |] // [to the down neighbour; to the up neighbour]
            ring |> Mpi.neighborAlltoall sent, (ring |> Mpi.ineighborAlltoall sent).Value)
    for rank in 0 .. size - 1 do
        let down, up = (rank + size - 1) % size, (rank + 1) % size
        Assert.Equal<int[] * int[]>(([| 10 * down + 1; 10 * up |], [| 10 * down + 1; 10 * up |]), results[rank])

[<Fact>]
let ``NeighborAllgather_OnANonPeriodicLine_DefaultOffTheEdge`` () =
    let results =
        Job.run 3 (fun world ->
            use line = world |> Mpi.cartesian [| 3 |] [| false |] false
            let r = Mpi.rank line
            line |> Mpi.neighborAllgather (r + 1),
            (line |> Mpi.ineighborAllgather (r + 1)).Value,
            line |> Mpi.neighborAllgatherv [| (if r > 0 then 2 else 0); (if r < 2 then 2 else 0) |] [| r; r |],
            // One element goes down and two up, so two come from below and one from above.
            line |> Mpi.neighborAlltoallv [| 1; 2 |] [| 2; 1 |] [| 10 * r; 10 * r + 1; 10 * r + 2 |])
    Assert.Equal<(int[] * int[] * int[] * int[])[]>(
        [| [| 0; 2 |], [| 0; 2 |], [| 1; 1 |], [| 0; 0; 10 |]
           [| 1; 3 |], [| 1; 3 |], [| 0; 0; 2; 2 |], [| 1; 2; 20 |]
           [| 2; 0 |], [| 2; 0 |], [| 1; 1 |], [| 11; 12; 0 |] |],
        results)

[<Fact>]
let ``NeighborCollectives_OnAGraph_FollowTheNeighbourLists`` () =
    let results =
        Job.run 4 (fun world ->
            use star = world |> Mpi.graph [| [| 1; 2; 3 |]; [| 0 |]; [| 0 |]; [| 0 |] |] false
            let r = Mpi.rank star
            star |> Mpi.neighborAllgather r, star |> Mpi.neighborAlltoall (Mpi.neighbors star |> Array.map (fun n -> $"{r}->{n}")))
    Assert.Equal<(int[] * string[])[]>(
        [| [| 1; 2; 3 |], [| "1->0"; "2->0"; "3->0" |]
           [| 0 |], [| "0->1" |]
           [| 0 |], [| "0->2" |]
           [| 0 |], [| "0->3" |] |],
        results)
