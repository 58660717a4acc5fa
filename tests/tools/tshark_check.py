#!/usr/bin/python3
"""tshark + tools/wireshark/metaroce.lua agree with `mrct decode --json`.

On the sample catalog (every packet type, IPv4/IPv6/802.1Q) and on seeded random
frames of every opcode:
- Wireshark's own BTH fields (infiniband.bth.*) equal mrct's bth.*;
- every metaroce.* field the Lua dissector registers equals the JSON value at the
  same path, and every JSON header field has a Lua counterpart (both directions);
- the Lua dissector's own CRC-32 says icrc_ok for every frame;
- tshark reports no malformed packet and no MetaRoCE expert error.
A negative control (a frame with a corrupted payload byte) must be flagged.
"""
import argparse
import subprocess
import sys

from common import Failures, make_pcap, mrct_json, run

WS_BTH = {"infiniband.bth.opcode": "opcode", "infiniband.bth.se": "se", "infiniband.bth.m": "m",
          "infiniband.bth.padcnt": "pad_cnt", "infiniband.bth.tver": "tver", "infiniband.bth.p_key": "p_key",
          "infiniband.bth.destqp": "dest_qp", "infiniband.bth.a": "ack_req", "infiniband.bth.reserved7": "resv7",
          "infiniband.bth.psn": "psn"}
# JSON keys derived by mrct that the Lua dissector deliberately does not repeat.
JSON_ONLY = {"rnrh.timer_ns", "ctrlh.tlvs", "ctrlh.tlvs_valid"}
HEADER_LAYERS = ["mrh", "reth", "seth", "immdt", "ackh", "nakh", "rnrh", "ctrlh"]


def tshark(lua, pcap, args):
    cmd = ["tshark", "-n", "-X", f"lua_script:{lua}", "-r", pcap] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or "Lua: Error" in r.stderr:
        sys.stderr.write(f"tshark failed: {r.stderr}\n")
        sys.exit(1)
    return r.stdout


def lua_fields(lua):
    out = run(["tshark", "-G", "fields", "-X", f"lua_script:{lua}"])
    names = []
    for line in out.splitlines():
        cols = line.split("\t")
        if len(cols) > 2 and cols[0] == "F" and cols[2].startswith("metaroce."):
            names.append(cols[2])
    return sorted(names)


def norm(v):
    """tshark -T fields text to a comparable string."""
    v = v.strip()
    if v == "<MISSING>":  # tshark's rendering of a zero-length bytes field
        return ""
    if v in ("True", "False"):
        return "1" if v == "True" else "0"
    if v.startswith("0x"):
        return str(int(v, 16))
    return v.replace(":", "")


def json_value(j, path):
    """The JSON value(s) for metaroce.<path>, as tshark would aggregate them."""
    parts = path.split(".")
    if parts[0] == "opcode_name":
        return j["bth"]["opcode_name"]
    if parts[0] in ("icrc", "icrc_computed"):
        return str(int(j[parts[0]], 16))
    if parts[0] == "icrc_ok":
        return "1" if j["icrc_ok"] else "0"
    if parts[0] == "payload":
        v = j.get("payload", {}).get(parts[1], "")
        return str(v)
    if parts[0] == "ctrlh" and parts[1] == "tlv":
        if "ctrlh" not in j:
            return None
        vals = []
        for t in j["ctrlh"]["tlvs"]:
            if parts[2] in t:
                v = t[parts[2]]
                vals.extend(v if isinstance(v, list) else [v])
        return ",".join(str(v) for v in vals) if vals else ""
    layer = j.get(parts[0])
    if layer is None:
        return None
    v = layer[parts[1]]
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def compare(lua, pcap, fields, fails, label):
    ours = mrct_json(args.mrct, pcap, payload=True)
    cols = list(WS_BTH) + fields
    out = tshark(lua, pcap, ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
                 + sum((["-e", c] for c in cols), []))
    rows = out.splitlines()
    if len(rows) != len(ours):
        fails.add(f"{label}: tshark printed {len(rows)} rows, mrct {len(ours)}")
        return 0
    checked = 0
    for i, (row, j) in enumerate(zip(rows, ours)):
        vals = row.split("\t")
        vals += [""] * (len(cols) - len(vals))
        for c, v in zip(cols, vals):
            if c in WS_BTH:
                want = j["bth"][WS_BTH[c]]
                want = str(int(want)) if not isinstance(want, bool) else ("1" if want else "0")
            else:
                want = json_value(j, c[len("metaroce."):])
                if want is None:
                    if v != "":
                        fails.add(f"{label} frame {i + 1}: {c}={v!r} but mrct has no such layer")
                    continue
            got = ",".join(norm(x) for x in v.split(",")) if v else ""
            if got != str(want).replace(":", ""):
                fails.add(f"{label} frame {i + 1} {j['bth']['opcode_name']}: {c} tshark={got!r} mrct={want!r}")
            checked += 1
    return checked


def coverage(fields, sample_json, fails):
    have = {f[len("metaroce."):] for f in fields}
    for j in sample_json:
        for layer in HEADER_LAYERS:
            for k in j.get(layer, {}):
                if f"{layer}.{k}" not in have and f"{layer}.{k}" not in JSON_ONLY:
                    fails.add(f"JSON field {layer}.{k} has no metaroce.{layer}.{k} in the Lua dissector")
            for t in j.get("ctrlh", {}).get("tlvs", []):
                for k in t:
                    if f"ctrlh.tlv.{k}" not in have and k != "length_ok":
                        fails.add(f"TLV field {k} has no metaroce.ctrlh.tlv.{k}")


def malformed(lua, pcap):
    out = tshark(lua, pcap, ["-Y", "_ws.malformed or metaroce.malformed or metaroce.bad_icrc or not metaroce"])
    return [line for line in out.splitlines() if line.strip()]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mrct", required=True)
    ap.add_argument("--lua", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    fails = Failures()
    fields = lua_fields(args.lua)
    if len(fields) < 60:
        fails.add(f"only {len(fields)} metaroce fields registered")
    catalog = make_pcap(args.mrct, args.workdir, "tshark_catalog.pcap")
    rnd4 = make_pcap(args.mrct, args.workdir, "tshark_random_v4.pcap", "--random", "40", "--seed", "7", "--ip", "4")
    rnd6 = make_pcap(args.mrct, args.workdir, "tshark_random_v6.pcap", "--random", "40", "--seed", "8", "--ip", "6")
    coverage(fields, mrct_json(args.mrct, catalog), fails)
    n = 0
    for label, pcap in (("catalog", catalog), ("random-v4", rnd4), ("random-v6", rnd6)):
        n += compare(args.lua, pcap, fields, fails, label)
        bad = malformed(args.lua, pcap)
        if bad:
            fails.add(f"{label}: tshark flags {len(bad)} frames: {bad[:3]}")

    # Negative control: corrupt a payload byte of the first catalog frame.
    data = bytearray(open(catalog, "rb").read())
    first_len = int.from_bytes(data[24 + 8:24 + 12], "little")
    data[24 + 16 + first_len - 6] ^= 0x01
    corrupt = f"{args.workdir}/tshark_corrupt.pcap"
    open(corrupt, "wb").write(bytes(data))
    flagged = tshark(args.lua, corrupt, ["-Y", "metaroce.bad_icrc"]).splitlines()
    if len(flagged) != 1:
        fails.add(f"negative control: expected exactly 1 frame flagged bad_icrc, got {len(flagged)}")
    fails.finish(f"{n} field values compared across {len(fields)} metaroce fields + Wireshark BTH")
