# tests/nvsmi-q.sh runs this.
import sys
d = open(sys.argv[1], encoding="utf-8").read()
mig = "".join("<mig_device><index>%d</index><gpu_instance_id>%d</gpu_instance_id>"
              "<compute_instance_id>0</compute_instance_id><fb_memory_usage><total>100 MiB</total>"
              "<used>%d MiB</used></fb_memory_usage></mig_device>" % (i, i + 1, i) for i in range(20))
open("t4-many-mig.xml", "w", encoding="utf-8").write(d.replace("<mig_devices>", "<mig_devices>" + mig, 1))
