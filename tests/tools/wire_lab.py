"""The real-wire lab shared by realtime_check.py, wire_kill_matrix.py and
bench/case_on_wire.py: two network namespaces joined by a veth pair
(addresses only inside them), mrct-refnic in one, the engine in the other,
or through a bump in the wire (`mrct emulate`) in a third; and a CPU quota that makes mrct-refnic a DUT too slow for its wire (D111)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time


def lab_args(ap):
    """The arguments every lab script takes: the binaries, the plan, a work folder."""
    ap.add_argument("--mrct", required=True)
    ap.add_argument("--refnic", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--workdir", required=True)


def agent_args(ap):
    """mrct-refnic's agent as another implementation's conforming one may be:
    --reap-stamps (D156) and --agent-as (D159), passed on to Refnic."""
    ap.add_argument("--reap-stamps", action="store_true",
                    help="mrct-refnic --reap-stamps: completions stamped when a poll reaps them (time_err_ns), as an "
                         "agent without the device's completion timestamps; a conforming DUT")
    ap.add_argument("--agent-as", action="append", default=[], choices=["1.0", "no-counters", "no-frame-counts"],
                    help="mrct-refnic --agent-as (repeatable): its agent as another implementation's conforming one may "
                         "be (protocol 1.0, no counters, no frame counts; D159)")


def lab_workdir(args, name):
    """A fresh folder under --workdir, or None without root and iproute2
    (network namespaces need both: the caller exits 77, ctest's skipped)."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIP: needs root and iproute2 (network namespaces)")
        return None
    work = os.path.join(args.workdir, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return work


def as_root():
    """Whether this runs as root (benchmarks on network namespaces say so, else exit 77)."""
    if os.geteuid() != 0:
        print("needs root (network namespaces)")
        return False
    return True


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r


class Netns:
    """The engine's and the DUT's namespaces joined by a veth; with bump=True
    by two veths through a third namespace (self.b, its ends self.vbe facing
    the engine and self.vbd facing the DUT) where a bump in the wire (`mrct
    emulate`) runs: a lab fabric the engine does not control."""

    def __init__(self, bump=False):
        tag = str(os.getpid() % 100000)
        self.e, self.d = f"mrct-e{tag}", f"mrct-d{tag}"
        self.ve, self.vd = f"mrcte{tag}", f"mrctd{tag}"
        self.bump = bump
        self.b, self.vbe, self.vbd = f"mrct-b{tag}", f"mrctbe{tag}", f"mrctbd{tag}"
        octet = 1 + os.getpid() % 250
        self.e_ip, self.d_ip = f"10.213.{octet}.1", f"10.213.{octet}.2"
        self.e_ip6, self.d_ip6 = f"fd00:213:{octet:x}::1", f"fd00:213:{octet:x}::2"
        # The engine's further addresses, one per further peer of a case
        # (topology.peers: GR-005 has four); agent+udp's local=IP+IP+...
        self.e_more = [f"10.213.{octet}.{n}" for n in (11, 12, 13)]
        self.e_more6 = [f"fd00:213:{octet:x}::{n:x}" for n in (11, 12, 13)]

    def __enter__(self):
        sh("ip", "netns", "add", self.e)
        sh("ip", "netns", "add", self.d)
        if self.bump:
            sh("ip", "netns", "add", self.b)
            sh("ip", "link", "add", self.ve, "type", "veth", "peer", "name", self.vbe)
            sh("ip", "link", "add", self.vd, "type", "veth", "peer", "name", self.vbd)
            for dev in (self.vbe, self.vbd):
                sh("ip", "link", "set", dev, "netns", self.b)
                sh("ip", "-n", self.b, "link", "set", dev, "mtu", "9000")
                sh("ip", "-n", self.b, "link", "set", dev, "up")
        else:
            sh("ip", "link", "add", self.ve, "type", "veth", "peer", "name", self.vd)
        sh("ip", "link", "set", self.ve, "netns", self.e)
        sh("ip", "link", "set", self.vd, "netns", self.d)
        for ns, dev, ip in ((self.e, self.ve, self.e_ip), (self.d, self.vd, self.d_ip)):
            # MetaRoCE frames carry up to 4096 payload bytes: jumbo frames, as in AI fabrics.
            sh("ip", "-n", ns, "link", "set", dev, "mtu", "9000")
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            ip6 = self.e_ip6 if ns == self.e else self.d_ip6
            sh("ip", "-n", ns, "addr", "add", f"{ip6}/64", "dev", dev, "nodad")
            if ns == self.e:
                for a, a6 in zip(self.e_more, self.e_more6):
                    sh("ip", "-n", ns, "addr", "add", f"{a}/24", "dev", dev)
                    sh("ip", "-n", ns, "addr", "add", f"{a6}/64", "dev", dev, "nodad")
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            if self.bump:
                # A veth leaves checksums to a NIC that is not there; a bump
                # passes frames on as they are, so each end's kernel must
                # finish them (docs/emulator.md "Veths").
                sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off")
        link = sh("ip", "-n", self.d, "-o", "link", "show", self.vd).stdout
        self.d_mac = link.split("link/ether ")[1].split()[0]
        return self

    def __exit__(self, *exc):
        sh("ip", "netns", "del", self.e, check=False)
        sh("ip", "netns", "del", self.d, check=False)
        if self.bump:
            sh("ip", "netns", "del", self.b, check=False)


class Bump:
    """`mrct emulate` between the engine and the DUT (Netns(bump=True): in
    ns.b, across its two veths) with the stages of `config`, its output in
    `log`, its summary (emulate.json) in `out` where given; stopped (SIGINT)
    by stop() or on leaving the `with`. `config` None: no emulator, nothing
    done (a lab script's optional --bump)."""

    def __init__(self, ns, mrct, config, log, out=None):
        self.ns, self.mrct, self.config, self.log, self.out = ns, mrct, config, log, out
        self.p = None

    def __enter__(self):
        if self.config:
            cmd = ["ip", "netns", "exec", self.ns.b, self.mrct, "emulate", "--port-a", self.ns.vbe, "--port-b",
                   self.ns.vbd, "--config", self.config, "--no-capture", "--progress", "0"]
            if self.out:
                cmd += ["--out", self.out]
            self.p = subprocess.Popen(cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
            time.sleep(0.5)  # its ports open before the first frame
        return self

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            self.p.wait(timeout=30)

    def __exit__(self, *exc):
        self.stop()


class Refnic:
    def __init__(self, args, ns, bug=None, token="s3cret", log=None, v6=False, dpdk=False, busy=False, raw=False,
                 packet_tx=False, variant=None, reap_stamps=False, agent_as=()):
        addr = ns.d_ip6 if v6 else ns.d_ip
        listen = f"[{addr}]:7700" if v6 else f"{addr}:7700"
        cmd = ["ip", "netns", "exec", ns.d, args.refnic, "--addr", addr, "--listen", listen, "--token", token]
        if bug:
            cmd += ["--bug", bug]
        if variant:  # conforming variants (D153): other legal choices than the reference's
            cmd += ["--variant", variant]
        if reap_stamps:  # completions stamped when a poll reaps them, with their uncertainty
            cmd += ["--reap-stamps"]
        for x in agent_as:  # another implementation's conforming agent (D159): 1.0, no-counters, no-frame-counts
            cmd += ["--agent-as", x]
        if raw:  # frames its sockets cannot send (DF clear, PAUSE) leave through libpcap on its veth end
            cmd += ["--raw-iface", ns.vd]
        if packet_tx:  # sends through an AF_PACKET socket on its veth end (udp_options::packet_iface)
            cmd += ["--packet-tx", ns.vd]
        if dpdk:  # its own EAL (file prefix, lcore 1) on net_af_packet over its veth end
            cmd += ["--dpdk", dpdk_eal(ns.vd, lcore=1, prefix=f"refnic{os.getpid()}")]
        if busy:  # spins on its port (DPDK) or its sockets (UDP) instead of sleeping
            cmd += ["--busy-poll"]
        self.log = open(log, "w") if log else subprocess.DEVNULL
        self.p = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 5
        while time.time() < deadline:  # wait for the listener
            r = sh("ip", "netns", "exec", ns.d, "ss", "-ltn", check=False)
            if ":7700" in r.stdout:
                return
            if self.p.poll() is not None:
                raise RuntimeError(f"mrct-refnic exited with {self.p.returncode}")
            time.sleep(0.05)
        raise RuntimeError("mrct-refnic did not listen within 5 s")

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                return self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
                return None
        return self.p.returncode


# agent+dpdk: every area, leaving out the port-move, failover and RTO cases
# whose verdicts count consecutive expiries at 1 ms timers (net_af_packet gives
# no receive timestamps: frames are stamped when polled), and SACK-020..022,
# whose DUT gives up its CONNECTs after about 2 ms (300 us timers): over
# net_af_packet the engine's first ACCEPT left 3.4-7.1 ms after the first
# CONNECT under load (2026-12-02, three set-up attempts each; issue 24).
DPDK_SET = ["HDR-*", "CONN-*", "PATH-001*", "PATH-006", "OOO-*", "SACK-00*", "SACK-01*", "SACK-03*", "SACK-05*",
            "RTO-006", "RTO-007", "RNR-*", "CC-*", "GR-*", "STR-*"]


class CpuQuota:
    """A cgroup of its own for one process, limited to `percent` of a CPU
    per 100 ms period (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us)."""

    PERIOD_US = 100000

    def __init__(self, pid, percent, name="mrct-dut"):
        quota = max(1000, int(self.PERIOD_US * percent / 100))
        v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
        self.path = os.path.join("/sys/fs/cgroup" if v2 else "/sys/fs/cgroup/cpu", f"{name}-{pid}")
        self.parent = os.path.dirname(self.path)
        os.makedirs(self.path, exist_ok=True)
        if v2:
            self._write("cpu.max", f"{quota} {self.PERIOD_US}")
        else:
            self._write("cpu.cfs_period_us", str(self.PERIOD_US))
            self._write("cpu.cfs_quota_us", str(quota))
        self._write("cgroup.procs", str(pid))

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def remove(self):
        # Whatever is left in it (the process has exited, or is moved out) goes back to the parent.
        try:
            for pid in open(os.path.join(self.path, "cgroup.procs")).read().split():
                with open(os.path.join(self.parent, "cgroup.procs"), "w") as f:
                    f.write(pid)
            os.rmdir(self.path)
        except OSError as e:
            print(f"cgroup {self.path}: {e}", file=sys.stderr)


def dpdk_eal(iface, lcore=0, prefix=None):
    """EAL arguments without hugepages (or shared config, unless a prefix names
    the process's own): net_af_packet on `iface`, with frames large enough for
    MetaRoCE's 4 KiB payloads."""
    files = f"--file-prefix={prefix}" if prefix else "--no-shconf"
    return (f"--no-huge {files} -l {lcore} -m 256 --no-pci "
            f"--vdev=net_af_packet0,iface={iface},blocksz=16384,framesz=16384,framecnt=512")


def dut_spec(wire, ns, token="s3cret", timeout="2s", v6=False, busy=False, tx_packet=False, direct=True):
    # The engine has an address for each further peer of a case
    # (local=IP+IP+...: GR-005 and GR-052 have four).
    local = "+".join([ns.e_ip6 if v6 else ns.e_ip] + (ns.e_more6 if v6 else ns.e_more))
    if v6:
        spec = f"agent+{wire}:agent=[{ns.d_ip6}]:7700,dut={ns.d_ip6},local={local},token={token},timeout={timeout}"
    else:
        spec = f"agent+{wire}:agent={ns.d_ip}:7700,dut={ns.d_ip},local={local},token={token},timeout={timeout}"
    if direct:  # the veth alone between the two: frames of every source port keep their order (D158)
        spec += ",fabric=none"
    if wire == "udp" and tx_packet:  # frames leave by a packet socket on the engine's veth end (D134)
        spec += ",tx=packet"
    if wire == "pcap":
        spec += f",iface={ns.ve}" + (f",dut_mac={ns.d_mac}" if v6 else "")
    if wire == "dpdk":
        # EAL without hugepages or shared config; net_af_packet on the veth, with
        # frames large enough for MetaRoCE's 4 KiB payloads. eal= takes the rest.
        spec += f",dut_mac={ns.d_mac}" + (",poll=busy" if busy else "") + f",eal={dpdk_eal(ns.ve)}"
    return spec


def with_pid(spec, pid):
    """The DUT spec with pid=PID: the engine reads the DUT process's waits for
    a CPU from the kernel (docs/timing.md). Before eal=, which takes the rest."""
    if not pid:
        return spec
    i = spec.find(",eal=")
    return spec + f",pid={pid}" if i < 0 else spec[:i] + f",pid={pid}" + spec[i:]


def run_mrct(args, out, dut, ns=None, extra=(), plan=None, during=None, engine_cpu=None):
    """`during(proc)`: called with the engine's process once the run has started
    (to act on the DUT while it runs). `engine_cpu`: the engine's process held
    to that percentage of a CPU (CpuQuota) for the run: a host too slow for the
    engine (D136)."""
    # A results.json left from an earlier run in `out` must not stand for
    # this one's (a run that writes none: bad arguments, exit 2).
    shutil.rmtree(out, ignore_errors=True)
    cmd = [args.mrct, "-q", "run", plan or args.plan, "--dut", dut, "--out", out, *extra]
    if ns:
        cmd = ["ip", "netns", "exec", ns.e] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    quota = CpuQuota(p.pid, engine_cpu, name="mrct-engine") if engine_cpu else None
    try:
        if during:
            during(p)
        stdout, stderr = p.communicate()
    finally:
        if quota:
            quota.remove()
    path = os.path.join(out, "results.json")
    res = json.load(open(path)) if os.path.exists(path) else None
    return p.returncode, res, stdout + stderr
