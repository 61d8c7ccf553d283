"""A grpcio client calling a PMPI server: python3 grpcio_client.py GENERATED_DIR HOST:PORT [connect]

With 'connect', only RankTransport.Connect is called (a rank endpoint, which serves nothing else), and any other
method must be refused UNIMPLEMENTED; without it, every method of the Kestrel test server.

Exits 0 after printing 'CLIENT OK' when every check passed; anything else is a failure the .NET test reports.
"""
import math
import queue
import sys

import grpc

from grpcio_common import CHANNEL_OPTIONS, check, load_messages

agent_pb2, master_pb2, transport_pb2 = load_messages(sys.argv[1])
target = sys.argv[2]
connect_only = sys.argv[3:] == ["connect"]
TIMEOUT = 20  # seconds for each call


def unary(channel, path, request, response_type, timeout=TIMEOUT):
    call = channel.unary_unary(path, request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=response_type.FromString)
    return call(request, timeout=timeout)


def get_node_info(channel):
    info = unary(channel, "/pmpi.v1.Agent/GetNodeInfo", agent_pb2.NodeInfoRequest(), agent_pb2.NodeInfo)
    check(info.node_name == "dotnet-node", f"node_name {info.node_name!r}")
    check(info.logical_cores == 3 and info.slots == 2, f"cores {info.logical_cores}, slots {info.slots}")
    check(math.isnan(info.load_average_15) and info.load_average_1 == 0.5, "load averages")
    check(list(info.running_jobs) == ["job-a", "job-b"], f"running_jobs {list(info.running_jobs)}")
    print("GetNodeInfo ok", flush=True)


def connect_echo(channel):
    """Ping-pong on one Connect stream: each frame is sent only after the previous echo came back."""
    connect = channel.stream_stream("/pmpi.v1.RankTransport/Connect",
                                    request_serializer=lambda m: m.SerializeToString(),
                                    response_deserializer=transport_pb2.Frame.FromString)
    outgoing = queue.Queue()

    def requests():
        while True:
            frame = outgoing.get()
            if frame is None:
                return
            yield frame

    responses = connect(requests(), timeout=TIMEOUT)
    hello = transport_pb2.Frame(hello=transport_pb2.Hello(job_id="job", job_token="secret", source_world_rank=1))
    outgoing.put(hello)
    check(next(responses) == hello, "Hello echo")
    for i in range(1, 201):
        frame = transport_pb2.Frame(data=transport_pb2.Data(context=0, source=1, tag=7, sequence=i, type_code=3,
                                                            total_length=8, payload=i.to_bytes(8, "little")))
        outgoing.put(frame)
        check(next(responses) == frame, f"echo of frame {i}")
    big = bytes(range(256)) * 4096 * 4  # 4 MB
    frame = transport_pb2.Frame(chunk=transport_pb2.Chunk(payload=big))
    outgoing.put(frame)
    check(next(responses).chunk.payload == big, "echo of a 4 MB chunk")
    outgoing.put(None)
    check(next(responses, None) is None, "the stream ends after the requests do")
    check(responses.code() == grpc.StatusCode.OK, f"Connect status {responses.code()}")
    print("Connect ok", flush=True)


def launch_stream(channel):
    launch = channel.unary_stream("/pmpi.v1.Agent/Launch", request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=agent_pb2.LaunchEvent.FromString)
    request = agent_pb2.LaunchRequest(job_id="job", world_size=2, ranks=[
        agent_pb2.RankLaunch(rank=0, program="a.dll"), agent_pb2.RankLaunch(rank=1, program="b.dll")])
    kinds = [event.WhichOneof("body") for event in launch(request, timeout=TIMEOUT)]
    check(kinds == ["started", "output", "exited"] * 2, f"Launch events {kinds}")
    print("Launch ok", flush=True)


def expect_error(channel, path, request, response_type, code, details=None, timeout=TIMEOUT):
    try:
        unary(channel, path, request, response_type, timeout)
    except grpc.RpcError as error:
        check(error.code() == code, f"{path}: code {error.code()} instead of {code} ({error.details()!r})")
        if details is not None:
            check(error.details() == details, f"{path}: details {error.details()!r} instead of {details!r}")
        return
    raise AssertionError(f"{path} succeeded; expected {code}")


def errors(channel):
    expect_error(channel, "/pmpi.v1.Agent/Kill", agent_pb2.KillRequest(job_id="j1"), agent_pb2.KillReply,
                 grpc.StatusCode.PERMISSION_DENIED, "wrong token for job 'j1' (100% sure, é)")
    expect_error(channel, "/pmpi.v1.Agent/NoSuchMethod", agent_pb2.KillRequest(), agent_pb2.KillReply,
                 grpc.StatusCode.UNIMPLEMENTED)
    expect_error(channel, "/pmpi.v1.JobControl/Register", master_pb2.RegisterRequest(), master_pb2.RankTable,
                 grpc.StatusCode.DEADLINE_EXCEEDED, timeout=0.3)
    print("errors ok", flush=True)


with grpc.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
    grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
    if connect_only:
        connect_echo(channel)
        expect_error(channel, "/pmpi.v1.Agent/GetNodeInfo", agent_pb2.NodeInfoRequest(), agent_pb2.NodeInfo,
                     grpc.StatusCode.UNIMPLEMENTED)
    else:
        get_node_info(channel)
        connect_echo(channel)
        launch_stream(channel)
        errors(channel)
print("CLIENT OK", flush=True)
