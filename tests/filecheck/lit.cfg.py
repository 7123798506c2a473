# ruff: noqa
import os
import lit.formats

config.name = "passflow"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]
config.environment["PATH"] = os.environ["PATH"]
config.environment["PYTHONHASHSEED"] = "0"
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "Inputs")))


def start_passflow_opt_server(config):
    """The suite's RUN lines are served by one passflow-opt-server, started with
    their environment and stopped at the end (docs/conformance.md);
    PASSFLOW_LIT_SERVED=0 runs each in its own process."""
    import atexit
    import shutil
    import subprocess
    import tempfile

    if os.environ.get("PASSFLOW_LIT_SERVED", "1") == "0":
        return
    server_bin = shutil.which("passflow-opt-server", path=config.environment["PATH"])
    if server_bin is None:
        return
    directory = tempfile.mkdtemp(prefix="passflow-lit-server-")  # mode 0700
    socket = os.path.join(directory, "socket")
    server = subprocess.Popen(
        [server_bin, socket],
        env=dict(config.environment),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    if server.stdout.readline():  # "passflow-opt-server: listening on ..."
        config.environment["PASSFLOW_SERVER"] = socket

    def stop():
        server.terminate()  # SIGTERM: it removes its socket
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)

    atexit.register(stop)


start_passflow_opt_server(config)
