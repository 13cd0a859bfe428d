"""Profiler tables as PyTorch prints them, for tests/proftable.sh.

A re-implementation of the formatting of torch/autograd/profiler_util.py
(_build_table, _format_memory, _format_time; github.com/pytorch/pytorch):
each column padded to its width and right-aligned ("Source Location"
left), two blanks after every cell, dash rules of the same widths above
and below the header and at the end, then "Self CPU time total: ...".
Names at least max_name_column_width - 3 long are cut to that and "..."
added. Events are dicts: name, calls, and any of cpu_mem, self_cpu_mem,
cuda_mem, self_cuda_mem (bytes), shapes, stack (a list of lines)."""


def format_memory(nbytes):
    KB = 1024
    MB = 1024 * KB
    GB = 1024 * MB
    if abs(nbytes) >= GB:
        return f"{nbytes * 1.0 / GB:.2f} Gb"
    elif abs(nbytes) >= MB:
        return f"{nbytes * 1.0 / MB:.2f} Mb"
    elif abs(nbytes) >= KB:
        return f"{nbytes * 1.0 / KB:.2f} Kb"
    else:
        return str(nbytes) + " b"


def format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def build_table(events, device="CUDA", device_time=True, memory=True, device_mem=True,
                shapes=False, stack=False, max_name_column_width=55, overload=False):
    name_w = min(max(len(e["name"]) for e in events) + 4, max_name_column_width)
    shapes_w = min(max(len(str(e.get("shapes", []))) for e in events) + 4, 80)
    headers = ["Name"] + (["Overload Name"] if overload else []) + [
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if device_time:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    if memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if device_mem:
            headers += [f"{device} Mem", f"Self {device} Mem"]
    headers.append("# of Calls")
    widths = [name_w] + ([name_w] if overload else []) + [12] * (len(headers) - 1 - overload)
    aligns = [">"] * len(headers)
    if shapes:
        headers.append("Input Shapes")
        widths.append(shapes_w)
        aligns.append(">")
    src_w = 0
    if stack:
        src_w = min(max(len(s) for e in events for s in e.get("stack", [""])) + 4, 75)
        headers.append("Source Location")
        widths.append(src_w)
        aligns.append("<")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    sep = "".join("-" * w + "  " for w in widths)
    out = [sep, row_format.format(*headers), sep]
    total = sum(e.get("self_cpu_us", 10.0) for e in events)
    for e in events:
        name = e["name"]
        if len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        us = e.get("self_cpu_us", 10.0)
        row = [name] + ([e.get("overload", "")] if overload else []) + [
            f"{us * 100.0 / total:.2f}%", format_time(us), f"{us * 100.0 / total:.2f}%",
            format_time(us), format_time(us / e["calls"])]
        if device_time:
            row += [format_time(5.0), "50.00%", format_time(5.0), format_time(5.0)]
        if memory:
            row += [format_memory(e.get("cpu_mem", 0)), format_memory(e.get("self_cpu_mem", 0))]
            if device_mem:
                row += [format_memory(e.get("cuda_mem", 0)), format_memory(e.get("self_cuda_mem", 0))]
        row.append(e["calls"])
        if shapes:
            row.append(str(e.get("shapes", []))[:shapes_w])
        if stack:
            st = e.get("stack", [])
            row.append(st[0] if st else "")
        out.append(row_format.format(*row))
        if stack:
            for entry in e.get("stack", [])[1:]:
                out.append(row_format.format(*([""] * (len(headers) - 1) + [entry])))
            out.append(row_format.format(*([""] * len(headers))))
    out.append(sep)
    out.append(f"Self CPU time total: {format_time(total)}")
    if device_time:
        out.append(f"Self {device} time total: {format_time(5.0 * len(events))}")
    return "\n".join(out) + "\n"
