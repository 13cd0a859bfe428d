# tests/nvsmi-q.sh runs this.
import sys
doc = open(sys.argv[1], encoding="utf-8").read()
procs = ("<processes><process_info><gpu_instance_id>4</gpu_instance_id>"
         "<compute_instance_id>0</compute_instance_id><pid>4242</pid><type>C</type>"
         "<process_name>python train.py</process_name><used_memory>10 MiB</used_memory>"
         "</process_info><process_info><gpu_instance_id>N/A</gpu_instance_id>"
         "<compute_instance_id>N/A</compute_instance_id><pid>77</pid><type>G</type>"
         "<process_name>Xorg</process_name><used_memory>2 MiB</used_memory></process_info></processes>")
assert "<processes />" in doc
open("a100-mig-process.xml", "w", encoding="utf-8").write(doc.replace("<processes />", procs))
