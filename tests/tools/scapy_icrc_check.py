#!/usr/bin/python3
"""ICRC agreement with independent implementations (spec model §2).

IPv4: Debian's scapy (scapy.contrib.roce, BTH.compute_icrc) recomputes the ICRC of
--count random frames of every opcode written by `mrct samples --random`, and
decodes the BTH; both must equal what mrct encoded and decodes.
IPv6: scapy 2.5 has no IPv6 ICRC, so the §2 rule is written out below with
zlib.crc32 over bytes parsed with struct, sharing no code with mrct.
A negative control (one corrupted byte) must make both sides disagree.
"""
import argparse
import collections
import struct
import zlib

from common import Failures, make_pcap, mrct_json, run

OPCODES = ["WRITE", "WRITE_IMM", "SEND", "SEND_IMM", "ACK", "NAK", "RNR", "CTRL"]


def icrc_v6_reference(frame: bytes) -> bytes:
    off = 12
    (etype,) = struct.unpack_from("!H", frame, off)
    off += 2
    if etype == 0x8100:
        (etype,) = struct.unpack_from("!H", frame, off + 2)
        off += 4
    assert etype == 0x86DD, hex(etype)
    ip = bytearray(frame[off:off + 40])
    (plen,) = struct.unpack_from("!H", ip, 4)
    rest = bytearray(frame[off + 40:off + 40 + plen - 4])  # UDP .. up to ICRC
    ip[0] |= 0x0F          # traffic class (low nibble of byte 0 + high of byte 1)
    ip[1] = ip[2] = ip[3] = 0xFF  # ... and the flow label
    ip[7] = 0xFF           # hop limit
    rest[6] = rest[7] = 0xFF  # UDP checksum
    rest[8 + 4] = 0xFF     # BTH FECN/BECN/Resv6
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(rest)) & 0xFFFFFFFF
    return struct.pack("<I", crc)


def check_ipv4(args, fails):
    from scapy.all import rdpcap, raw  # noqa: imported here so IPv6 runs without scapy
    from scapy.contrib.roce import BTH

    pcap = make_pcap(args.mrct, args.workdir, "scapy_v4.pcap", "--random", str(args.count), "--ip", "4",
                     "--seed", str(args.seed))
    ours = mrct_json(args.mrct, pcap)
    pkts = rdpcap(pcap)
    assert len(pkts) == len(ours) == args.count * len(OPCODES), (len(pkts), len(ours))
    per_op = collections.Counter()
    for i, (p, j) in enumerate(zip(pkts, ours)):
        wire = raw(p)
        bth = p[BTH]
        scapy_icrc = bth.compute_icrc(None)
        if scapy_icrc != wire[-4:]:
            fails.add(f"frame {i + 1} {j['bth']['opcode_name']}: scapy ICRC {scapy_icrc.hex()} != carried {wire[-4:].hex()}")
        if not j["icrc_ok"]:
            fails.add(f"frame {i + 1}: mrct says icrc_ok false")
        b = j["bth"]
        pairs = {"opcode": "opcode", "solicited": "se", "migreq": "m", "padcount": "pad_cnt", "version": "tver",
                 "pkey": "p_key", "fecn": "fecn", "becn": "becn", "resv6": "resv6", "dqpn": "dest_qp",
                 "ackreq": "ack_req", "resv7": "resv7", "psn": "psn"}
        for sf, of in pairs.items():
            if int(getattr(bth, sf)) != int(b[of]):
                fails.add(f"frame {i + 1}: bth.{of} scapy={getattr(bth, sf)} mrct={b[of]}")
        per_op[b["opcode_name"]] += 1
    for op in OPCODES:
        if per_op[op] < args.count:
            fails.add(f"only {per_op[op]} {op} frames checked, want {args.count}")

    # Negative control: corrupt one payload byte; scapy and mrct must both see it.
    p = pkts[0].copy()
    w = bytearray(raw(p))
    w[-6] ^= 0x01
    from scapy.layers.l2 import Ether
    bad = Ether(bytes(w))
    if bad[BTH].compute_icrc(None) == bytes(w[-4:]):
        fails.add("negative control: scapy did not notice a corrupted byte")
    return per_op


def check_ipv6(args, fails):
    pcap = make_pcap(args.mrct, args.workdir, "icrc_v6.pcap", "--random", str(args.count), "--ip", "6",
                     "--seed", str(args.seed))
    ours = mrct_json(args.mrct, pcap)
    per_op = collections.Counter()
    frames = read_pcap(pcap)
    assert len(frames) == len(ours) == args.count * len(OPCODES)
    for i, (f, j) in enumerate(zip(frames, ours)):
        ref = icrc_v6_reference(f)
        if ref != f[-4:]:
            fails.add(f"frame {i + 1} {j['bth']['opcode_name']}: reference ICRC {ref.hex()} != carried {f[-4:].hex()}")
        if not j["icrc_ok"]:
            fails.add(f"frame {i + 1}: mrct says icrc_ok false")
        per_op[j["bth"]["opcode_name"]] += 1
    bad = bytearray(frames[0])
    bad[-6] ^= 0x01
    if icrc_v6_reference(bytes(bad)) == bytes(bad[-4:]):
        fails.add("negative control: reference did not notice a corrupted byte")
    return per_op


def read_pcap(path):
    """Minimal pcap reader (nanosecond or microsecond magic), independent of libpcap."""
    data = open(path, "rb").read()
    magic = struct.unpack_from("<I", data, 0)[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), hex(magic)
    off, out = 24, []
    while off < len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, off)
        off += 16
        out.append(data[off:off + incl])
        off += incl
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mrct", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--count", type=int, default=1000, help="frames per opcode")
    ap.add_argument("--ip", type=int, choices=[4, 6], required=True)
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args()
    fails = Failures()
    per_op = check_ipv4(args, fails) if args.ip == 4 else check_ipv6(args, fails)
    who = "scapy.contrib.roce" if args.ip == 4 else "independent zlib reference"
    fails.finish(f"IPv{args.ip} ICRC vs {who}: " + ", ".join(f"{k}={v}" for k, v in sorted(per_op.items())))


if __name__ == "__main__":
    main()
