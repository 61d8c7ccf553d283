"""A grpcio server for PMPI's client to call: python3 grpcio_server.py GENERATED_DIR

Listens on 127.0.0.1 with a free port, prints 'PORT <n>', and serves until its standard input closes (or two
minutes pass, so a lost parent never leaves it running). Methods:
  RankTransport.Connect  echoes every frame
  Agent.GetNodeInfo      a fixed node named 'python-node'
  Agent.Launch           started/output/exited per requested rank
  Agent.Kill             fails with PERMISSION_DENIED and a message needing percent-encoding
  JobControl.Register        sleeps past any short deadline
"""
import os
import sys
import threading
import time
from concurrent import futures

import grpc

from grpcio_common import CHANNEL_OPTIONS, load_messages

agent_pb2, master_pb2, transport_pb2 = load_messages(sys.argv[1])


def serialize(message):
    return message.SerializeToString()


def connect(request_iterator, context):
    for frame in request_iterator:
        yield frame


def get_node_info(request, context):
    return agent_pb2.NodeInfo(node_name="python-node", logical_cores=5, running_jobs=["j1"], load_average_1=1.5)


def launch(request, context):
    for rank in request.ranks:
        yield agent_pb2.LaunchEvent(started=agent_pb2.RankStarted(rank=rank.rank, process_id=100 + rank.rank))
        yield agent_pb2.LaunchEvent(output=master_pb2.RankOutput(rank=rank.rank, is_error=True, line=rank.program))
        yield agent_pb2.LaunchEvent(exited=master_pb2.RankExited(rank=rank.rank, exit_code=rank.rank))


def kill(request, context):
    context.abort(grpc.StatusCode.PERMISSION_DENIED, f"job '{request.job_id}': 100% wrong token, é")


def register(request, context):
    time.sleep(5)
    return master_pb2.RankTable()


handlers = [
    grpc.method_handlers_generic_handler("pmpi.v1.RankTransport", {
        "Connect": grpc.stream_stream_rpc_method_handler(connect, transport_pb2.Frame.FromString, serialize),
    }),
    grpc.method_handlers_generic_handler("pmpi.v1.Agent", {
        "GetNodeInfo": grpc.unary_unary_rpc_method_handler(get_node_info, agent_pb2.NodeInfoRequest.FromString, serialize),
        "Launch": grpc.unary_stream_rpc_method_handler(launch, agent_pb2.LaunchRequest.FromString, serialize),
        "Kill": grpc.unary_unary_rpc_method_handler(kill, agent_pb2.KillRequest.FromString, serialize),
    }),
    grpc.method_handlers_generic_handler("pmpi.v1.JobControl", {
        "Register": grpc.unary_unary_rpc_method_handler(register, master_pb2.RegisterRequest.FromString, serialize),
    }),
]

server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=handlers, options=CHANNEL_OPTIONS)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(f"PORT {port}", flush=True)

watchdog = threading.Timer(120, lambda: os._exit(3))
watchdog.daemon = True
watchdog.start()
sys.stdin.read()  # the parent closes our standard input when it is done
server.stop(grace=0)
