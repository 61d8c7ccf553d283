module Pmpi.FSharp.Tests.PointToPointTests

open System.Threading.Tasks
open Xunit
open Pmpi
open Pmpi.FSharp

[<Fact>]
let ``Send_PipedArrayAndTuple_ReceiverGetsBoth`` () =
    let received =
        Job.run 2 (fun world ->
            if Mpi.rank world = 0 then
                world |> Mpi.send 1 7 [| 1.0; 2.0; 3.0 |]
                world |> Mpi.send 1 8 (42, "answer", [ 1; 2 ])
                None
            else
                let values = world |> Mpi.recv<float[]> 0 7
                let tuple = world |> Mpi.recv<int * string * int list> 0 8
                Some(values, tuple))
    Assert.Equal(Some([| 1.0; 2.0; 3.0 |], (42, "answer", [ 1; 2 ])), received[1])

[<Fact>]
let ``RecvWithStatus_AnySource_ReportsSenderAndTag`` () =
    let received =
        Job.run 3 (fun world ->
            match Mpi.rank world with
            | 2 -> world |> Mpi.send 0 11 "from two"; None
            | 0 ->
                let value, status = world |> Mpi.recvWithStatus<string> Mpi.anySource Mpi.anyTag
                Some(value, status.Source, status.Tag)
            | _ -> None)
    Assert.Equal(Some("from two", 2, 11), received[0])

[<Fact>]
let ``RecvInto_ShorterMessage_FillsFrontAndReturnsCount`` () =
    let received =
        Job.run 2 (fun world ->
            if Mpi.rank world = 0 then
                world |> Mpi.send 1 3 [| 5; 6 |]
                [||], 0
            else
                let buffer = Array.zeroCreate<int> 4
                let count = world |> Mpi.recvInto 0 3 buffer
                buffer, count)
    Assert.Equal(([| 5; 6; 0; 0 |], 2), received[1])

[<Fact>]
let ``TryProbe_BeforeAndAfterSend_NoneThenSome`` () =
    let observed =
        Job.run 2 (fun world ->
            if Mpi.rank world = 0 then
                let before = world |> Mpi.tryProbe 1 5
                Mpi.barrier world
                let status = world |> Mpi.probe 1 5
                let after = world |> Mpi.tryProbe 1 5
                ignore (world |> Mpi.recv<int> 1 5)
                Some(before.IsNone, status.Source, after |> Option.map (fun s -> s.Tag))
            else
                Mpi.barrier world
                world |> Mpi.send 0 5 99
                None)
    Assert.Equal(Some(true, 1, Some 5), observed[0])

[<Fact>]
let ``RecvTask_AndSendTask_ExchangeWithoutBlocking`` () =
    let received =
        Job.run 2 (fun world ->
            let partner = 1 - Mpi.rank world
            let incoming = world |> Mpi.recvTask<string> partner 1
            let outgoing = world |> Mpi.sendTask partner 1 $"hello from {Mpi.rank world}"
            Task.WaitAll(incoming, outgoing)
            incoming.Result)
    Assert.Equal<string[]>([| "hello from 1"; "hello from 0" |], received)

[<Fact>]
let ``RecvAsync_InsideAsyncWorkflow_ReturnsValue`` () =
    let received =
        Job.run 2 (fun world ->
            async {
                if Mpi.rank world = 0 then
                    do! world |> Mpi.sendAsync 1 2 (Some 3.5)
                    return None
                else
                    return! world |> Mpi.recvAsync<float option> 0 2
            }
            |> Async.RunSynchronously)
    Assert.Equal(Some 3.5, received[1])

/// The workflow raises the receive's own error, not an AggregateException around it.
[<Fact>]
let ``RecvAsync_WrongType_RaisesTheTypeMismatchItself`` () =
    let errors =
        Job.run 2 (fun world ->
            if Mpi.rank world = 0 then
                world |> Mpi.send 1 4 [| 1; 2 |]
                None
            else
                try
                    world |> Mpi.recvAsync<float[]> 0 4 |> Async.RunSynchronously |> ignore
                    None
                with error -> Some(error.GetType(), error.Message))
    let errorType, message = errors[1].Value
    Assert.Equal(typeof<MpiException>, errorType)
    Assert.Contains("Rank 1 receiving from rank 0 with tag 4", message)

[<Fact>]
let ``Recv_WrongType_ThrowsTypeMismatchNamingRankAndTag`` () =
    let error =
        Assert.Throws<MpiException>(fun () ->
            Job.run 2 (fun world ->
                if Mpi.rank world = 0 then world |> Mpi.send 1 4 [| 1; 2 |]
                else world |> Mpi.recv<float[]> 0 4 |> ignore)
            |> ignore)
    Assert.Contains("Rank 1 receiving from rank 0 with tag 4", error.Message)

/// Mpi.run returns what the body returned, the lowest rank's where the ranks are threads of this process, so main can
/// return it as the process's exit code.
[<Fact>]
let ``Run_BodyReturnsAnExitCode_RunReturnsTheLowestRanksValue`` () =
    let code = Mpi.run [| "--pmpi-ranks"; "3"; "left" |] (fun world args -> if args = [| "left" |] then 40 + Mpi.rank world else -1)
    Assert.Equal(40, code)

[<Fact>]
let ``RecvWithStatusTaskAndAsync_GiveTheValueAndWhereItCameFrom`` () =
    let results =
        Job.run 3 (fun world ->
            match Mpi.rank world with
            | 0 ->
                let fromTask, status = (world |> Mpi.recvWithStatusTask<string> Mpi.anySource 5).Result
                let fromAsync, other = world |> Mpi.recvWithStatusAsync<string> Mpi.anySource 5 |> Async.RunSynchronously
                Some(set [ fromTask, status.Source, status.Tag; fromAsync, other.Source, other.Tag ])
            | r ->
                world |> Mpi.send 0 5 $"from {r}"
                None)
    Assert.Equal(Some(set [ "from 1", 1, 5; "from 2", 2, 5 ]), results[0])
