#!/usr/bin/env python3
"""Checks every kernel of the hip.gfx90a_mfma code objects without a GPU.

For each kernel (per row of backends/hip/families/gfx90a_mfma.inc: f16 and bf16 multiplicands,
dwordx4 and gathering loaders), from the code object itself:
  - its MFMA instructions (llvm-objdump --mcpu=gfx90a): the shape the row's wave tile calls for,
    the f16 or bf16_1k form, at least one K tile's worth; ds_read_b128 operand reads; the dwordx4
    kernels also global_load_dwordx4 and ds_write_b128;
  - no scratch: private segment 0, no VGPR or SGPR spills (metadata), scratch disabled in the
    kernel descriptor (COMPUTE_PGM_RSRC2), no scratch_* instructions;
  - LDS = (BLOCK_M + BLOCK_N) x BLOCK_K x 2 bytes, within 64 KiB; workgroup size 64 x WARPS;
  - occupancy: the kernel descriptor's VGPR allocation (VGPRs and AGPRs, granule 8, out of 512
    per lane), its SGPRs and the workgroups of its LDS size a CU holds leave at least the row's
    waves_per_eu waves per SIMD;
  - the argument block: one by-value argument of sizeof(KernelArgs) bytes at offset 0 (the
    kernel reads its epilogue arguments from the kernarg segment at that offset).
Prints the table config -> VGPRs, AGPRs, allocation, SGPRs, LDS, occupancy, MFMAs, per multiplicand
type and loader.
  usage: codegen_check.py <source dir> <llvm-readelf> <llvm-objdump> <code object>...
"""
import re
import struct
import subprocess
import sys

GFX90A_REGS = 512       # VGPRs + AGPRs per lane
GFX90A_MAX_WAVES = 8    # per SIMD
GFX90A_LDS = 65536      # per CU (and per workgroup)
GFX90A_WORKGROUPS = 16  # per CU, of more than one wave


def table_rows(src):
    rows = []
    for line in open(f"{src}/backends/hip/families/gfx90a_mfma.inc"):
        m = re.match(r"\s*OG_HIP_GFX90A_MFMA\(([^)]*)\)", line)
        if m:
            bm, bn, bk, gm, st, w, e = (int(x) for x in m.group(1).split(","))
            rows.append(dict(bm=bm, bn=bn, bk=bk, group_m=gm, stages=st, waves=w, wpe=e))
    return rows


def kernel_args_size(src):
    text = open(f"{src}/backends/hip/gfx90a/kernel_args.h").read()
    return int(re.search(r"sizeof\(KernelArgs\) == (\d+)", text).group(1))


def metadata(readelf, co):
    """The AMDGPU metadata of each kernel, as {name: {field: value, "args": [{field: value}]}}.
    llvm-readelf prints it as YAML: "  - .f:" opens a kernel, "    .f:" is a kernel field,
    "      - .f:" opens an argument and "        .f:" is an argument field."""
    out = subprocess.run([readelf, "--notes", co], check=True, capture_output=True, text=True).stdout
    kernels, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"( *)(- )?\.(\w+):\s*(\S*)", line)
        if not m:
            continue
        indent, dash, field, value = len(m.group(1)), m.group(2), m.group(3), m.group(4)
        if indent == 2 and dash:
            cur = {"args": []}
        if cur is None:
            continue
        if indent in (2, 4) and field != "args":
            cur[field] = value
            if field == "name":
                kernels[value] = cur
        elif indent == 6 and dash:
            cur["args"].append({field: value})
        elif indent == 8 and cur["args"]:
            cur["args"][-1][field] = value
    return kernels


def kernel_descriptors(co):
    """{kernel name: (rsrc1, rsrc2, rsrc3)} from the 64-byte <name>.kd symbols."""
    data = open(co, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    symtab = next(s for s in sections if s[1] == 2)  # SHT_SYMTAB
    strtab = sections[symtab[6]]
    out = {}
    for off in range(symtab[4], symtab[4] + symtab[5], 24):
        name_off, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, off)
        end = data.index(b"\0", strtab[4] + name_off)
        name = data[strtab[4] + name_off:end].decode()
        if not name.endswith(".kd") or size != 64:
            continue
        sec = sections[shndx]
        base = sec[4] + (value - sec[3])
        rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", data, base + 44)
        out[name[:-3]] = (rsrc1, rsrc2, rsrc3)
    return out


def disassembly(objdump, co):
    """{kernel name: [instruction mnemonics]}"""
    out = subprocess.run([objdump, "-d", "--mcpu=gfx90a", co], check=True, capture_output=True, text=True).stdout
    kernels, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"[0-9a-f]+ <([^>]+)>:", line)
        if m:
            cur = kernels.setdefault(m.group(1), [])
            continue
        i = re.match(r"\s+([a-z_0-9]+)\s", line)
        if cur is not None and i:
            cur.append(i.group(1))
    return kernels


def sgpr_waves(sgprs):  # gfx9 SGPR occupancy steps (800 per SIMD, granule 16)
    for limit, waves in ((80, 10), (88, 9), (100, 8), (112, 7), (128, 6)):
        if sgprs <= limit:
            return waves
    return 5


def main():
    src, readelf, objdump, *objects = sys.argv[1:]
    rows = table_rows(src)
    args_size = kernel_args_size(src)
    failures = []
    seen = set()
    print(f"{'config':<38} {'mul':<4} {'loader':<7} {'VGPR':>4} {'AGPR':>4} {'alloc':>5} {'SGPR':>4} {'LDS':>6}  "
          f"{'occupancy (regs/sgpr/lds)':<26} MFMAs")
    lines = []
    for co in objects:
        meta, kds, code = metadata(readelf, co), kernel_descriptors(co), disassembly(objdump, co)
        for name, md in sorted(meta.items()):
            def fail(msg):
                failures.append(f"{name}: {msg}")
            m = re.fullmatch(r"og_gfx90a_mfma_(f16|bf16)_(\d+)x(\d+)x(\d+)_w(\d+)_e(\d+)(_gather)?", name)
            if not m:
                fail("not a kernel name of symbols.h")
                continue
            t, bm, bn, bk, w, e = m.group(1), *(int(x) for x in m.groups()[1:6])
            gather = m.group(7) is not None
            row = next((r for r in rows if (r["bm"], r["bn"], r["bk"], r["waves"], r["wpe"]) == (bm, bn, bk, w, e)), None)
            if row is None:
                fail("no row of the table")
                continue
            seen.add((t, bm, bn, bk, w, e, gather))
            # Instructions.
            ins = code.get(name, [])
            wave_m, wave_n = bm // 2, bn // (w // 2)
            shape = "32x32x8" if wave_m % 32 == 0 and wave_n % 32 == 0 else "16x16x16"
            mfma_k = 8 if shape == "32x32x8" else 16
            want = f"v_mfma_f32_{shape}{'f16' if t == 'f16' else 'bf16_1k'}"
            mfmas = sum(1 for i in ins if i == want)
            others = sorted({i for i in ins if i.startswith("v_mfma") and i != want})
            n_mfma = 32 if shape == "32x32x8" else 16
            per_tile = (wave_m // n_mfma) * (wave_n // n_mfma) * (bk // mfma_k)
            if mfmas < per_tile:
                fail(f"{mfmas} {want}, fewer than one K tile's {per_tile}")
            if others:
                fail(f"other MFMAs {others}")
            if "ds_read_b128" not in ins:
                fail("no ds_read_b128 operand reads")
            if not gather and ("global_load_dwordx4" not in ins or "ds_write_b128" not in ins):
                fail("the dwordx4 kernel lacks global_load_dwordx4 or ds_write_b128")
            if any(i.startswith("scratch_") for i in ins):
                fail("scratch instructions")
            # Scratch and spills.
            for field in ("private_segment_fixed_size", "vgpr_spill_count", "sgpr_spill_count"):
                if int(md.get(field, "-1")) != 0:
                    fail(f"{field} {md.get(field)}")
            if md.get("uses_dynamic_stack", "false") != "false":
                fail("uses a dynamic stack")
            rsrc1, rsrc2, rsrc3 = kds.get(name, (None, None, None))
            if rsrc1 is None:
                fail("no kernel descriptor")
                continue
            if rsrc2 & 1:
                fail("scratch enabled in COMPUTE_PGM_RSRC2")
            # LDS, workgroup size, arguments.
            lds = int(md["group_segment_fixed_size"])
            if lds != (bm + bn) * bk * 2 or lds > GFX90A_LDS:
                fail(f"LDS {lds} bytes, expected {(bm + bn) * bk * 2} (at most {GFX90A_LDS})")
            if int(md["max_flat_workgroup_size"]) != 64 * w or int(md["wavefront_size"]) != 64:
                fail(f"workgroup size {md['max_flat_workgroup_size']}, wavefront {md['wavefront_size']}")
            args = md["args"]
            if len(args) != 1 or args[0].get("offset") != "0" or args[0].get("size") != str(args_size) or \
                    args[0].get("value_kind") != "by_value":
                fail(f"arguments {args}, expected one by-value block of {args_size} bytes at offset 0")
            # Registers and occupancy.
            vgprs, agprs, sgprs = int(md["vgpr_count"]), int(md["agpr_count"]), int(md["sgpr_count"])
            alloc = ((rsrc1 & 0x3F) + 1) * 8            # VGPRs + AGPRs, granule 8
            accum_offset = ((rsrc3 & 0x3F) + 1) * 4     # where AGPRs start in the unified file
            if alloc < vgprs or (agprs and alloc < accum_offset + agprs):
                fail(f"descriptor allocation {alloc} below VGPRs {vgprs} + AGPRs {agprs}")
            regs_waves = min(GFX90A_MAX_WAVES, GFX90A_REGS // alloc)
            # Workgroups per CU: as many as its 64 KiB of LDS holds, at most 16 (barriers); their
            # waves spread over the CU's 4 SIMDs.
            lds_waves = min(GFX90A_LDS // lds if lds else GFX90A_WORKGROUPS, GFX90A_WORKGROUPS) * w // 4
            occupancy = min(regs_waves, sgpr_waves(sgprs), lds_waves, GFX90A_MAX_WAVES)
            if occupancy < e:
                fail(f"occupancy {occupancy} below waves_per_eu {e}")
            config = f"gfx90a_mfma:{bm}x{bn}x{bk}-g{row['group_m']}-s{row['stages']}-w{w}-e{e}"
            occ = f"{occupancy} ({regs_waves}/{min(sgpr_waves(sgprs), GFX90A_MAX_WAVES)}/{min(lds_waves, 99)}) >= {e}"
            lines.append((rows.index(row), t, gather, f"{config:<38} {t:<4} {'gather' if gather else 'dwordx4':<7} {vgprs:>4} "
                          f"{agprs:>4} {alloc:>5} {sgprs:>4} {lds:>6}  {occ:<26} {mfmas} {want}"))
    for *_, line in sorted(lines):
        print(line)
    expected = {(t, r["bm"], r["bn"], r["bk"], r["waves"], r["wpe"], g) for r in rows for t in ("f16", "bf16") for g in (False, True)}
    for missing in sorted(expected - seen):
        failures.append(f"no kernel for row {missing}")
    for f in failures:
        print("FAIL  " + f)
    print(f"hip codegen check: {len(seen)} kernels of {len(rows)} rows, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
