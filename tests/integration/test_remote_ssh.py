"""SshExecutor against a real OpenSSH server on 127.0.0.1 (root: sshd, /run/sshd)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from sshd_hosts import SshdServer, keygen, sshd_skip_reason, start_sshd

from vsperf.errors import CommandError, UserError
from vsperf.executor import CommandLog
from vsperf.remote import HostAuthError, HostKeyError, HostLostError, HostUnreachableError, SshHost
from vsperf.remote.ssh import SshExecutor

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshdServer]:
    reason = sshd_skip_reason()
    if reason:
        pytest.skip(reason)
    srv = start_sshd(tmp_path_factory.mktemp("sshd"), "hosta")
    yield srv
    srv.stop()


def host_of(srv: SshdServer, **kw: object) -> SshHost:
    args: dict[str, object] = {"name": srv.name, "address": srv.address, "port": srv.port,
                               "key_file": srv.client_key, "known_hosts_file": srv.known_hosts}
    args.update(kw)
    return SshHost(**args)  # type: ignore[arg-type]


@pytest.fixture
def ex(sshd: SshdServer, tmp_path: Path) -> Iterator[SshExecutor]:
    executor = SshExecutor(host_of(sshd), CommandLog(tmp_path / "commands.log"))
    yield executor
    executor.close()


def test_run_output_exit_codes_input_env(ex: SshExecutor, tmp_path: Path) -> None:
    assert ex.run(["echo", "hello world", "$HOME"]).stdout == "hello world $HOME\n"
    with pytest.raises(CommandError, match=r"exit 3.*boom"):
        ex.run(["sh", "-c", "echo boom >&2; exit 3"])
    assert ex.run(["sh", "-c", "exit 3"], check=False).returncode == 3
    assert ex.run(["cat"], input_text="line 1\nline 2").stdout == "line 1\nline 2"
    assert "VSP_X=a b\n" in ex.run(["env"], env={"VSP_X": "a b"}).stdout
    with pytest.raises(CommandError, match="no-such-program-vsperf: not found on host hosta"):
        ex.run(["no-such-program-vsperf"])


def test_every_command_is_logged_with_its_host_and_replays_with_openssh(ex: SshExecutor, tmp_path: Path) -> None:
    ex.run(["echo", "it's here"])
    line = (tmp_path / "commands.log").read_text().splitlines()[-1]
    assert " [hosta] ssh -p " in line and "root@127.0.0.1 -- " in line
    replay = line.split(" [hosta] ", 1)[1]
    out = subprocess.run(["sh", "-c", replay + " </dev/null"], capture_output=True, text=True, timeout=30)
    assert out.stdout == "it's here\n", out.stderr


def test_netns(ex: SshExecutor) -> None:
    ns = "vsp9ssh-ns"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        out = ex.run(["ip", "-o", "link", "show"], netns=ns).stdout
        assert "lo:" in out and out.count("\n") == 1  # only the namespace's loopback
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=True)


def test_a_timed_out_command_is_killed_on_the_host(ex: SshExecutor) -> None:
    marker = f"vsp9-sleep-{time.monotonic_ns()}"
    start = time.monotonic()
    with pytest.raises(CommandError, match=r"timed out after 0\.5 s on host hosta"):
        ex.run(["bash", "-c", f"exec -a {marker} sleep 30"], timeout_s=0.5)
    assert time.monotonic() - start < 5
    time.sleep(0.2)
    left = [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
    assert left == []


def test_background_process_pid_signals_and_output(ex: SshExecutor, tmp_path: Path) -> None:
    proc = ex.spawn(["sleep", "30"])
    assert proc.host == "hosta" and proc.poll() is None
    # the remote PID is the command itself (the shell execs it right after printing the PID)
    deadline = time.monotonic() + 5
    while psutil.Process(proc.pid).name() != "sleep" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert psutil.Process(proc.pid).name() == "sleep"
    proc.terminate()
    assert proc.wait(5) is not None and not psutil.pid_exists(proc.pid)
    assert proc.returncode is not None
    assert "[hosta] [background] ssh" in (tmp_path / "commands.log").read_text()

    piped = ex.spawn(["sh", "-c", "echo out; echo err >&2; exit 3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert piped.wait(5) == 3
    assert piped.stdout is not None and piped.stdout.read() == b"out\n"
    assert piped.stderr is not None and piped.stderr.read() == b"err\n"

    log = tmp_path / "bg.log"
    with log.open("ab") as out:  # closed right away, as lab.process does: output still arrives
        logged = ex.spawn(["sh", "-c", "echo one; echo two >&2"], stdout=out, stderr=subprocess.STDOUT)
    assert logged.wait(5) == 0
    assert log.read_text() == "one\ntwo\n"


def test_a_background_process_with_a_piped_stdin_is_a_two_way_channel(ex: SshExecutor) -> None:
    # What the vsgen engine's control needs: lines in on stdin, answers out on stdout, each as it comes.
    proc = ex.spawn(["sh", "-c", "while read -r line; do echo \"got $line\"; done; echo end"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"one\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == b"got one\n"  # answered before the input ended
    proc.stdin.write(b"two\n")
    proc.stdin.close()  # the end of its input
    assert proc.stdout.read() == b"got two\nend\n" and proc.wait(5) == 0
    assert ex.spawn(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE).communicate(b"x\n", timeout=5) == \
        (b"x\n", None)


def test_stopping_a_process_stops_its_children(ex: SshExecutor) -> None:
    proc = ex.spawn(["sh", "-c", "sleep 30 & sleep 30 & wait"])
    time.sleep(0.3)
    kids = psutil.Process(proc.pid).children()
    assert len(kids) == 2
    proc.kill()
    assert proc.wait(5) is not None
    psutil.wait_procs(kids, timeout=5)
    assert not any(k.is_running() and k.status() != psutil.STATUS_ZOMBIE for k in kids)


def test_sftp_put_get(ex: SshExecutor, tmp_path: Path) -> None:
    src = tmp_path / "src.bin"
    src.write_bytes(bytes(range(256)) * 100)
    remote = tmp_path / "remote-copy"
    ex.put(src, str(remote), mode=0o755)
    assert remote.read_bytes() == src.read_bytes() and remote.stat().st_mode & 0o777 == 0o755
    back = tmp_path / "back"
    ex.get(str(remote), back)
    assert back.read_bytes() == src.read_bytes()
    assert "scp -P " in (tmp_path / "commands.log").read_text()
    with pytest.raises(CommandError, match="host hosta"):
        ex.get("/nonexistent/file", back)


def test_one_connection_serves_many_commands(ex: SshExecutor, sshd: SshdServer) -> None:
    for _ in range(5):
        ex.run(["true"])
    conns = [c for c in psutil.net_connections("tcp") if c.raddr and c.raddr.port == sshd.port
             and c.status == psutil.CONN_ESTABLISHED and c.pid == psutil.Process().pid]
    assert len(conns) == 1


def test_wrong_host_key_unknown_host_and_refused_key(sshd: SshdServer, tmp_path: Path) -> None:
    other = tmp_path / "other_key"
    keygen(other)
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"[127.0.0.1]:{sshd.port} {(tmp_path / 'other_key.pub').read_text().split()[0]} "
                     f"{(tmp_path / 'other_key.pub').read_text().split()[1]}\n")
    with pytest.raises(HostKeyError, match=rf"^host hosta .*does not match the one in {wrong}"):
        SshExecutor(host_of(sshd, known_hosts_file=wrong)).connect()
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    with pytest.raises(HostKeyError, match=rf"its key is not in {empty}"):
        SshExecutor(host_of(sshd, known_hosts_file=empty)).connect()
    with pytest.raises(HostAuthError, match=r"authentication with key .*other_key failed"):
        SshExecutor(host_of(sshd, key_file=other)).connect()
    assert issubclass(HostKeyError, UserError) and issubclass(HostAuthError, UserError)


def test_unreachable_host(sshd: SshdServer) -> None:
    with pytest.raises(HostUnreachableError, match=r"^host hosta .*cannot connect: .*refused"):
        SshExecutor(host_of(sshd, port=1)).connect()
    # A port that accepts connections but never sends an SSH banner: the banner timeout ends it.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        with pytest.raises(HostUnreachableError, match=r"^host hosta .*no SSH service answered"):
            SshExecutor(host_of(sshd, port=silent.getsockname()[1], connect_timeout_s=0.5)).connect()


def test_a_host_that_goes_away_fails_the_command_naming_the_host(tmp_path: Path) -> None:
    srv = start_sshd(tmp_path / "dying", "dying")
    executor = SshExecutor(host_of(srv))
    pid = 0
    try:
        proc = executor.spawn(["sleep", "30"])
        pid = proc.pid
        executor.run(["true"])
        srv.kill()
        with pytest.raises(HostLostError, match=r"lost the SSH connection to host dying"):
            executor.run(["sleep", "5"])
        with pytest.raises(HostLostError, match="dying"):
            proc.poll()
        proc.terminate()  # warns, does not raise: teardown goes on
    finally:
        srv.stop()
        executor.close()
        if pid and psutil.pid_exists(pid) and psutil.Process(pid).name() == "sleep":
            psutil.Process(pid).kill()  # the host's process outlives its connection, as it would
