# tests/nvsmi-q.sh runs this.
import sys
doc = open(sys.argv[1], encoding="utf-8").read()
extra = ("<future_section><fb_memory_usage><used>77777 MiB</used></fb_memory_usage>"
         "<uuid>GPU-not-this</uuid></future_section><future_flag>Yes</future_flag>")
doc = doc.replace("</fb_memory_usage>", "</fb_memory_usage>" + extra, 1)
doc = doc.replace("</nvidia_smi_log>", "<future_log_element a='1'>x</future_log_element></nvidia_smi_log>")
open("t4-unknown.xml", "w", encoding="utf-8").write(doc)
