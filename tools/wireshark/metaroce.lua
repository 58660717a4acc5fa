-- MetaRoCE 1.2 (spec model) dissector for the headers after the BTH.
--
-- Wireshark's own InfiniBand dissector decodes RoCEv2 up to the BTH and shows
-- opcodes 0xC0-0xD3 as vendor data. This postdissector finds that BTH (by
-- Wireshark's infiniband.bth.opcode field) and decodes MRH, RETH, SETH, ImmDt,
-- ACKH, NAKH, RNRH and CTRLH+TLVs, and checks the ICRC with its own CRC-32.
-- Field names mirror `mrct decode --json`: metaroce.<layer>.<field>.
--
-- Use: tshark -X lua_script:tools/wireshark/metaroce.lua -r capture.pcap -V
-- or copy it into your Wireshark personal plugins folder.

local p = Proto("metaroce", "MetaRoCE 1.2")

local opcode_names = {
  [0xC0] = "WRITE", [0xC1] = "WRITE_IMM", [0xC2] = "SEND", [0xC3] = "SEND_IMM",
  [0xD0] = "ACK", [0xD1] = "NAK", [0xD2] = "RNR", [0xD3] = "CTRL",
}
local nak_names = {
  [0x01] = "INVALID_REQUEST", [0x02] = "REMOTE_ACCESS_ERROR", [0x03] = "REMOTE_OPERATIONAL_ERROR",
  [0x0B] = "PSN_OUT_OF_WINDOW", [0x0E] = "UNKNOWN_CONNECTION", [0x0F] = "HEADER_MISMATCH",
  [0x10] = "CONNECTION_CLOSING", [0x20] = "INVALID_PATH_ID",
}
local ctrl_names = {
  "CONNECT", "ACCEPT", "REJECT", "CLOSE", "CLOSE_ACK", "PROBE", "PROBE_REPLY",
  "RNR_QUERY", "RNR_SYNC", "PATH_RESET", "PATH_RESET_ACK",
}
local tlv_names = {
  "VERSION", "NUM_PATHS", "SRC_CONN_ID", "MTU", "INITIAL_PPSN", "REJECT_REASON",
  "RNR_COUNT", "PATH_ID", "NONCE",
}

local F = {}
local function u(abbr, bits, mask, desc)
  local ctor = ({[8] = ProtoField.uint8, [16] = ProtoField.uint16, [24] = ProtoField.uint24,
                 [32] = ProtoField.uint32, [64] = ProtoField.uint64})[bits]
  F[abbr] = ctor("metaroce." .. abbr, desc or abbr, base.DEC, nil, mask)
end
local function b(abbr, bits, mask) F[abbr] = ProtoField.bool("metaroce." .. abbr, abbr, bits, nil, mask) end
local function s(abbr) F[abbr] = ProtoField.string("metaroce." .. abbr, abbr) end
local function x(abbr) F[abbr] = ProtoField.bytes("metaroce." .. abbr, abbr, base.NONE) end

s("opcode_name")
-- MRH
u("mrh.ver", 8, 0xF0); u("mrh.path_epoch", 8, 0x0F); u("mrh.flags", 8)
b("mrh.som", 8, 0x80); b("mrh.eom", 8, 0x40); b("mrh.retx", 8, 0x20); b("mrh.rnr_resend", 8, 0x10)
u("mrh.flags_resv", 8, 0x0F); u("mrh.path_id", 8); u("mrh.attempt", 8, 0xF0); u("mrh.resv", 8, 0x0F)
u("mrh.stream_id", 16); u("mrh.tag", 16); u("mrh.stream_seq", 32); u("mrh.msg_offset", 32)
-- RETH, SETH, ImmDt
u("reth.va", 64); u("reth.r_key", 32); u("reth.dma_len", 32)
u("seth.recv_idx", 32); u("seth.msg_len", 32)
u("immdt.data", 32)
-- ACKH
u("ackh.ver", 8, 0xF0); u("ackh.path_epoch", 8, 0x0F); u("ackh.flags", 8); b("ackh.ece", 8, 0x80)
u("ackh.flags_resv", 8, 0x7F); u("ackh.path_id", 8); u("ackh.resv", 8)
u("ackh.trig_ppsn_resv", 32, 0xFF000000); u("ackh.trig_ppsn", 32, 0x00FFFFFF)
x("ackh.sack"); u("ackh.ce_count", 16); u("ackh.grant_rate", 16); u("ackh.rnr_count", 16); u("ackh.resv2", 16)
-- NAKH
u("nakh.ver", 8, 0xF0); u("nakh.epoch", 8, 0x0F); u("nakh.code", 8); s("nakh.code_name"); u("nakh.path_id", 8)
u("nakh.resv", 8); u("nakh.nak_ppsn_resv", 32, 0xFF000000); u("nakh.nak_ppsn", 32, 0x00FFFFFF)
u("nakh.stream_id", 16); u("nakh.tag", 16); u("nakh.stream_seq", 32)
-- RNRH
u("rnrh.ver", 8, 0xF0); u("rnrh.epoch", 8, 0x0F); u("rnrh.timer_code", 8, 0xF8); u("rnrh.resv_timer", 8, 0x07)
u("rnrh.path_id", 8); u("rnrh.attempt", 8, 0xF0); u("rnrh.resv_attempt", 8, 0x0F)
u("rnrh.ppsn_resv", 32, 0xFF000000); u("rnrh.ppsn", 32, 0x00FFFFFF); u("rnrh.stream_id", 16); u("rnrh.tag", 16)
u("rnrh.stream_seq", 32); u("rnrh.rnr_seq", 16); u("rnrh.resv", 16)
-- CTRLH and TLVs
u("ctrlh.ver", 8, 0xF0); u("ctrlh.resv", 8, 0x0F); u("ctrlh.type", 8); s("ctrlh.type_name"); u("ctrlh.tlv_length", 16)
u("ctrlh.tlv.type", 8); s("ctrlh.tlv.name"); u("ctrlh.tlv.length", 16); x("ctrlh.tlv.value")
u("ctrlh.tlv.major", 8); u("ctrlh.tlv.minor", 8); u("ctrlh.tlv.num_paths", 16)
u("ctrlh.tlv.src_conn_id_resv", 32, 0xFF000000); u("ctrlh.tlv.src_conn_id", 32, 0x00FFFFFF)
u("ctrlh.tlv.mtu", 16); u("ctrlh.tlv.initial_ppsn", 32, 0x00FFFFFF); u("ctrlh.tlv.reject_reason", 8)
u("ctrlh.tlv.rnr_count", 16); u("ctrlh.tlv.path_id", 8); u("ctrlh.tlv.nonce", 32)
-- payload, pad, ICRC
u("payload.length", 32); x("payload.pad"); x("payload.data")
F["icrc"] = ProtoField.uint32("metaroce.icrc", "icrc", base.HEX)
F["icrc_computed"] = ProtoField.uint32("metaroce.icrc_computed", "icrc_computed", base.HEX)
F["icrc_ok"] = ProtoField.bool("metaroce.icrc_ok", "icrc_ok", base.NONE)

local fields = {}
for _, f in pairs(F) do fields[#fields + 1] = f end
p.fields = fields

local ef_malformed = ProtoExpert.new("metaroce.malformed", "MetaRoCE structure error", expert.group.MALFORMED, expert.severity.ERROR)
local ef_icrc = ProtoExpert.new("metaroce.bad_icrc", "MetaRoCE ICRC mismatch", expert.group.CHECKSUM, expert.severity.WARN)
p.experts = { ef_malformed, ef_icrc }

-- CRC-32 (IEEE, reflected), table-driven, written here so that this check is
-- independent of the C++ codec.
local crc_table = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if bit32.band(c, 1) == 1 then c = bit32.bxor(0xEDB88320, bit32.rshift(c, 1)) else c = bit32.rshift(c, 1) end
  end
  crc_table[i] = c
end
local function crc_bytes(crc, bytes)
  for i = 1, #bytes do
    crc = bit32.bxor(crc_table[bit32.band(bit32.bxor(crc, bytes[i]), 0xFF)], bit32.rshift(crc, 8))
  end
  return crc
end

local f_bth_opcode = Field.new("infiniband.bth.opcode")
local f_udp_srcport = Field.new("udp.srcport")
local f_udp_length = Field.new("udp.length")
local f_ip_version = Field.new("ip.version")
local f_ipv6_version = Field.new("ipv6.version")

-- ICRC over 0xFF*8 | IP | UDP | BTH ... with the variant fields as ones (spec §2).
local function icrc_of(tvb, ip_off, ip_len, ipv, udp_off, icrc_off)
  local bytes = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
  for i = ip_off, icrc_off - 1 do bytes[#bytes + 1] = tvb(i, 1):uint() end
  local function set(off, v) bytes[9 + off - ip_off] = v end
  if ipv == 4 then
    set(ip_off + 1, 0xFF); set(ip_off + 8, 0xFF); set(ip_off + 10, 0xFF); set(ip_off + 11, 0xFF)
  else
    set(ip_off, bit32.bor(tvb(ip_off, 1):uint(), 0x0F))
    set(ip_off + 1, 0xFF); set(ip_off + 2, 0xFF); set(ip_off + 3, 0xFF); set(ip_off + 7, 0xFF)
  end
  set(udp_off + 6, 0xFF); set(udp_off + 7, 0xFF)
  set(udp_off + 8 + 4, 0xFF)
  return bit32.bnot(crc_bytes(0xFFFFFFFF, bytes))
end

local function dissect_tlvs(tvb, tree, off, stop)
  while off < stop do
    if stop - off < 3 then return false end
    local t = tvb(off, 1):uint()
    local len = tvb(off + 1, 2):uint()
    if off + 3 + len > stop then return false end
    local name = tlv_names[t] or "UNKNOWN"
    local st = tree:add(p, tvb(off, 3 + len), "TLV " .. name)
    st:add(F["ctrlh.tlv.type"], tvb(off, 1))
    st:add(F["ctrlh.tlv.name"], name)
    st:add(F["ctrlh.tlv.length"], tvb(off + 1, 2))
    local v = off + 3
    st:add(F["ctrlh.tlv.value"], tvb(v, len))
    if t == 1 and len == 2 then st:add(F["ctrlh.tlv.major"], tvb(v, 1)); st:add(F["ctrlh.tlv.minor"], tvb(v + 1, 1))
    elseif t == 2 and len == 2 then st:add(F["ctrlh.tlv.num_paths"], tvb(v, 2))
    elseif t == 3 and len == 4 then st:add(F["ctrlh.tlv.src_conn_id"], tvb(v, 4)); st:add(F["ctrlh.tlv.src_conn_id_resv"], tvb(v, 4))
    elseif t == 4 and len == 2 then st:add(F["ctrlh.tlv.mtu"], tvb(v, 2))
    elseif t == 5 and len > 0 and len % 4 == 0 then
      for i = 0, len / 4 - 1 do st:add(F["ctrlh.tlv.initial_ppsn"], tvb(v + 4 * i, 4)) end
    elseif t == 6 and len == 1 then st:add(F["ctrlh.tlv.reject_reason"], tvb(v, 1))
    elseif t == 7 and len == 2 then st:add(F["ctrlh.tlv.rnr_count"], tvb(v, 2))
    elseif t == 8 and len == 1 then st:add(F["ctrlh.tlv.path_id"], tvb(v, 1))
    elseif t == 9 and len == 4 then st:add(F["ctrlh.tlv.nonce"], tvb(v, 4))
    end
    off = v + len
  end
  return true
end

function p.dissector(tvb, pinfo, root)
  local op_fi = f_bth_opcode()
  if not op_fi then return end
  local op = op_fi.value
  local name = opcode_names[op]
  if not name then return end
  local bth = op_fi.offset
  local udp_off = f_udp_srcport().offset
  local icrc_off = udp_off + f_udp_length().value - 4
  local ipv, ip_off, ip_len
  local v4, v6 = f_ip_version(), f_ipv6_version()
  if v6 then ipv, ip_off, ip_len = 6, v6.offset, 40 else ipv, ip_off = 4, v4.offset; ip_len = udp_off - ip_off end

  local tree = root:add(p, tvb(bth + 12, icrc_off + 4 - bth - 12), "MetaRoCE " .. name)
  tree:add(F["opcode_name"], name)
  local off = bth + 12
  local pad = bit32.band(bit32.rshift(tvb(bth + 1, 1):uint(), 4), 3)
  local function need(n)
    if off + n > icrc_off then tree:add_proto_expert_info(ef_malformed, "header runs past the ICRC"); return false end
    return true
  end
  local function sub(label, len) return tree:add(p, tvb(off, len), label) end

  if op >= 0xC0 and op <= 0xC3 then
    if not need(16) then return end
    local t = sub("MRH", 16)
    t:add(F["mrh.ver"], tvb(off, 1)); t:add(F["mrh.path_epoch"], tvb(off, 1))
    t:add(F["mrh.flags"], tvb(off + 1, 1)); t:add(F["mrh.som"], tvb(off + 1, 1)); t:add(F["mrh.eom"], tvb(off + 1, 1))
    t:add(F["mrh.retx"], tvb(off + 1, 1)); t:add(F["mrh.rnr_resend"], tvb(off + 1, 1)); t:add(F["mrh.flags_resv"], tvb(off + 1, 1))
    t:add(F["mrh.path_id"], tvb(off + 2, 1)); t:add(F["mrh.attempt"], tvb(off + 3, 1)); t:add(F["mrh.resv"], tvb(off + 3, 1))
    t:add(F["mrh.stream_id"], tvb(off + 4, 2)); t:add(F["mrh.tag"], tvb(off + 6, 2))
    t:add(F["mrh.stream_seq"], tvb(off + 8, 4)); t:add(F["mrh.msg_offset"], tvb(off + 12, 4))
    off = off + 16
    if op <= 0xC1 then
      if not need(16) then return end
      local r = sub("RETH", 16)
      r:add(F["reth.va"], tvb(off, 8)); r:add(F["reth.r_key"], tvb(off + 8, 4)); r:add(F["reth.dma_len"], tvb(off + 12, 4))
      off = off + 16
    else
      if not need(8) then return end
      local r = sub("SETH", 8)
      r:add(F["seth.recv_idx"], tvb(off, 4)); r:add(F["seth.msg_len"], tvb(off + 4, 4))
      off = off + 8
    end
    if op == 0xC1 or op == 0xC3 then
      if not need(4) then return end
      sub("ImmDt", 4):add(F["immdt.data"], tvb(off, 4))
      off = off + 4
    end
    local plen = icrc_off - off - pad
    if plen < 0 then tree:add_proto_expert_info(ef_malformed, "PadCnt beyond the bytes"); return end
    tree:add(F["payload.length"], plen)
    if plen > 0 then tree:add(F["payload.data"], tvb(off, plen)) end
    off = off + plen
  elseif op == 0xD0 then
    if not need(48) then return end
    local t = sub("ACKH", 48)
    t:add(F["ackh.ver"], tvb(off, 1)); t:add(F["ackh.path_epoch"], tvb(off, 1)); t:add(F["ackh.flags"], tvb(off + 1, 1))
    t:add(F["ackh.ece"], tvb(off + 1, 1)); t:add(F["ackh.flags_resv"], tvb(off + 1, 1)); t:add(F["ackh.path_id"], tvb(off + 2, 1))
    t:add(F["ackh.resv"], tvb(off + 3, 1)); t:add(F["ackh.trig_ppsn_resv"], tvb(off + 4, 4)); t:add(F["ackh.trig_ppsn"], tvb(off + 4, 4))
    t:add(F["ackh.sack"], tvb(off + 8, 32)); t:add(F["ackh.ce_count"], tvb(off + 40, 2)); t:add(F["ackh.grant_rate"], tvb(off + 42, 2))
    t:add(F["ackh.rnr_count"], tvb(off + 44, 2)); t:add(F["ackh.resv2"], tvb(off + 46, 2))
    off = off + 48
  elseif op == 0xD1 then
    if not need(16) then return end
    local t = sub("NAKH", 16)
    local code = tvb(off + 1, 1):uint()
    t:add(F["nakh.ver"], tvb(off, 1)); t:add(F["nakh.epoch"], tvb(off, 1)); t:add(F["nakh.code"], tvb(off + 1, 1))
    t:add(F["nakh.code_name"], nak_names[code] or "UNKNOWN"); t:add(F["nakh.path_id"], tvb(off + 2, 1)); t:add(F["nakh.resv"], tvb(off + 3, 1))
    t:add(F["nakh.nak_ppsn_resv"], tvb(off + 4, 4)); t:add(F["nakh.nak_ppsn"], tvb(off + 4, 4))
    t:add(F["nakh.stream_id"], tvb(off + 8, 2)); t:add(F["nakh.tag"], tvb(off + 10, 2)); t:add(F["nakh.stream_seq"], tvb(off + 12, 4))
    off = off + 16
  elseif op == 0xD2 then
    if not need(20) then return end
    local t = sub("RNRH", 20)
    t:add(F["rnrh.ver"], tvb(off, 1)); t:add(F["rnrh.epoch"], tvb(off, 1)); t:add(F["rnrh.timer_code"], tvb(off + 1, 1))
    t:add(F["rnrh.resv_timer"], tvb(off + 1, 1)); t:add(F["rnrh.path_id"], tvb(off + 2, 1)); t:add(F["rnrh.attempt"], tvb(off + 3, 1))
    t:add(F["rnrh.resv_attempt"], tvb(off + 3, 1)); t:add(F["rnrh.ppsn_resv"], tvb(off + 4, 4)); t:add(F["rnrh.ppsn"], tvb(off + 4, 4))
    t:add(F["rnrh.stream_id"], tvb(off + 8, 2)); t:add(F["rnrh.tag"], tvb(off + 10, 2)); t:add(F["rnrh.stream_seq"], tvb(off + 12, 4))
    t:add(F["rnrh.rnr_seq"], tvb(off + 16, 2)); t:add(F["rnrh.resv"], tvb(off + 18, 2))
    off = off + 20
  else
    if not need(4) then return end
    local t = sub("CTRLH", 4)
    local ctype = tvb(off + 1, 1):uint()
    local tlen = tvb(off + 2, 2):uint()
    t:add(F["ctrlh.ver"], tvb(off, 1)); t:add(F["ctrlh.resv"], tvb(off, 1)); t:add(F["ctrlh.type"], tvb(off + 1, 1))
    t:add(F["ctrlh.type_name"], ctrl_names[ctype] or "UNKNOWN"); t:add(F["ctrlh.tlv_length"], tvb(off + 2, 2))
    off = off + 4
    if off + tlen + pad ~= icrc_off then tree:add_proto_expert_info(ef_malformed, "TLV length disagrees with the packet"); return end
    if not dissect_tlvs(tvb, t, off, off + tlen) then tree:add_proto_expert_info(ef_malformed, "TLV overruns"); return end
    off = off + tlen
  end
  if off + pad ~= icrc_off then tree:add_proto_expert_info(ef_malformed, "bytes after the headers disagree with PadCnt"); return end
  if op >= 0xD0 then tree:add(F["payload.length"], 0) end
  if pad > 0 then tree:add(F["payload.pad"], tvb(off, pad)) end

  local carried = tvb(icrc_off, 4):le_uint()
  local computed = icrc_of(tvb, ip_off, ip_len, ipv, udp_off, icrc_off)
  tree:add(F["icrc"], tvb(icrc_off, 4), carried)
  tree:add(F["icrc_computed"], computed):set_generated()
  local ok = carried == computed
  tree:add(F["icrc_ok"], ok):set_generated()
  if not ok then tree:add_proto_expert_info(ef_icrc) end
  pinfo.cols.protocol = "MetaRoCE"
  pinfo.cols.info = string.format("%s QP=0x%06x PSN=%d", name, tvb(bth + 5, 3):uint(), tvb(bth + 9, 3):uint())
end

register_postdissector(p)
