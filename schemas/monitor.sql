-- Statements of the monitoring readers (src/import/monitor.c).

-- name: insert_gpu
INSERT INTO gpu (source_id, host, idx, uuid, pci_bus_id, name, mig, memory_total_bytes)
VALUES (:source, :host, :idx, :uuid, :bus_id, :name, :mig, :total);

-- A later sighting fills in what the first one lacked; a name the table
-- cut ('NVIDIA GeForce RTX 2080 ...') gives way to a whole one.
-- name: complete_gpu
UPDATE gpu SET name = CASE WHEN name IS NULL OR (name LIKE '%...' AND :name NOT LIKE '%...')
                           THEN coalesce(:name, name) ELSE name END,
               memory_total_bytes = coalesce(memory_total_bytes, :total),
               uuid = coalesce(uuid, :uuid),
               pci_bus_id = coalesce(pci_bus_id, :bus_id),
               idx = coalesce(idx, :idx)
 WHERE id = :gpu;

-- name: insert_gpu_sample
INSERT INTO gpu_sample (source_id, gpu_id, seq, ts_ns, memory_used_bytes, memory_total_bytes,
                        memory_free_bytes, memory_reserved_bytes, utilization_gpu_pct,
                        utilization_memory_pct)
VALUES (:source, :gpu, :seq, :ts, :used, :total, :free, :reserved, :util_gpu, :util_memory);

-- name: insert_process_sample
INSERT INTO process_sample (source_id, gpu_id, sample_id, ts_ns, pid, process_name,
                            process_type, used_bytes)
VALUES (:source, :gpu, :sample, :ts, :pid, :name, :type, :used);
