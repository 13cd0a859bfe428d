-- The remedy catalogue (docs/remedies.md, advice with this job's numbers): one
-- block per remedy, read by the analysis pass `advise`
-- (src/analyze/advise.c), which runs every block of this file, in order,
-- over the temporary table advice_facts (one row per finding: analyze.sql's
-- advise_facts says what each fact is). docs/remedies.md is the reader's
-- version, with the sources (peers-and-remedies.md part (a)).
--
-- A block's name is the remedy's id. It returns one row per finding the
-- remedy applies to (its WHERE is the trigger), with the columns
--   finding_id    the finding
--   saving_bytes  the bytes the remedy would save, from the facts: a
--                 remedy whose saving cannot be estimated from this job's
--                 figures is not given (its trigger requires them)
--   title, setting, evidence, source   texts; in setting and evidence
--                 {name} is replaced by the row's column `name`: a
--                 *_bytes figure as a size ("1.50 GiB"), any other as an
--                 integer
-- and any further columns, the figures the evidence cites (stored as the
-- advice's figures JSON); a column `inferred` that is 1 says the saving
-- rests on an inferred figure, not one an input states (it ranks after
-- the measured ones). Shares of the peak compare with
-- peak_allocated_bytes (the device's allocated peak). Remedies that lower
-- the job's demand answer findings about_demand (an OOM with figures, a
-- peak near capacity); the cache's, the leak's and other processes' answer
-- their own causes.

-- name: activation-checkpointing
SELECT finding_id,
       CAST(activation_bytes * (1.0 - 1.0 / vr_sqrt(layers)) AS INTEGER) AS saving_bytes,
       activation_bytes, layers, peak_allocated_bytes,
       'Activation (gradient) checkpointing' AS title,
       'model.gradient_checkpointing_enable()  # Hugging Face; or wrap each of the {layers} blocks: torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)' AS setting,
       'Activations were {activation_bytes} of the {peak_allocated_bytes} peak across {layers} modules; keeping only the inputs of every k-th layer (k about the square root of {layers}) recomputes the rest (about one extra forward pass).' AS evidence,
       'https://huggingface.co/docs/transformers/perf_train_gpu_one#gradient-checkpointing' AS source
  FROM advice_facts
 WHERE about_demand AND NOT inference_server AND layers >= 2 AND peak_allocated_bytes > 0
   AND activation_bytes * 3 >= peak_allocated_bytes
   AND activation_bytes >= max(parameter_bytes, optimizer_state_bytes, gradient_bytes,
                               temporary_bytes, input_bytes);

-- name: mixed-precision
SELECT finding_id,
       (activation_bytes + temporary_bytes) / 2 - parameter_bytes / 2 AS saving_bytes,
       activation_bytes, temporary_bytes, parameter_bytes, peak_allocated_bytes,
       'Mixed precision (bf16 autocast)' AS title,
       'with torch.autocast("cuda", dtype=torch.bfloat16):' || char(10) || '    loss = model(batch)' AS setting,
       'Activations and temporaries were {activation_bytes} and {temporary_bytes} of the {peak_allocated_bytes} peak; in 16 bits they halve, while a 16-bit copy of the {parameter_bytes} of weights is added (if they are fp32 today).' AS evidence,
       'https://huggingface.co/docs/transformers/perf_train_gpu_one#mixed-precision-training' AS source
  FROM advice_facts
 WHERE about_demand AND NOT inference_server AND peak_allocated_bytes > 0
   AND (activation_bytes + temporary_bytes) * 2 >= peak_allocated_bytes
   AND parameter_bytes + optimizer_state_bytes < activation_bytes + temporary_bytes;

-- name: micro-batch-accumulation
SELECT finding_id,
       (activation_bytes + temporary_bytes + input_bytes) / 2 AS saving_bytes,
       activation_bytes, temporary_bytes, input_bytes, peak_allocated_bytes,
       'Halve the micro-batch, accumulate gradients over 2' AS title,
       'TrainingArguments(per_device_train_batch_size=B // 2, gradient_accumulation_steps=2)  # or: (loss / 2).backward() on two half batches, then optimizer.step()' AS setting,
       'Activations, temporaries and inputs, which scale with the batch, were {activation_bytes}, {temporary_bytes} and {input_bytes} of the {peak_allocated_bytes} peak; half the batch holds half of them, and accumulation keeps the effective batch.' AS evidence,
       'https://huggingface.co/docs/transformers/perf_train_gpu_one#gradient-accumulation' AS source
  FROM advice_facts
 WHERE about_demand AND has_backward AND peak_allocated_bytes > 0
   AND (activation_bytes + temporary_bytes + input_bytes) * 3 >= peak_allocated_bytes;

-- name: zero-fsdp-sharding
SELECT finding_id,
       model_state_bytes * (ranks - 1) / ranks AS saving_bytes,
       model_state_bytes, ranks, peak_allocated_bytes,
       'Shard model states across the {ranks} ranks (FSDP / ZeRO-3)' AS title,
       'model = FullyShardedDataParallel(model, sharding_strategy=ShardingStrategy.FULL_SHARD)  # or DeepSpeed "zero_optimization": {"stage": 3}' AS setting,
       'Parameters, gradients and optimizer state were {model_state_bytes} of the {peak_allocated_bytes} peak on each of {ranks} ranks; fully sharded, each rank keeps 1/{ranks} of them.' AS evidence,
       'https://pytorch.org/docs/stable/fsdp.html' AS source
  FROM advice_facts
 WHERE about_demand AND ranks >= 2 AND peak_allocated_bytes > 0
   AND model_state_bytes * 4 >= peak_allocated_bytes;

-- name: cpu-offload
SELECT finding_id,
       optimizer_state_bytes + gradient_bytes AS saving_bytes,
       optimizer_state_bytes, gradient_bytes, model_state_bytes, peak_allocated_bytes,
       'Offload optimizer state and gradients to the CPU' AS title,
       'DeepSpeed "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}  # or FSDP(model, cpu_offload=CPUOffload(offload_params=True))' AS setting,
       'Model states were {model_state_bytes} of the {peak_allocated_bytes} peak; offloading the optimizer state ({optimizer_state_bytes}) and gradients ({gradient_bytes}) leaves only the weights on the GPU, at the cost of slower steps.' AS evidence,
       'https://deepspeed.readthedocs.io/en/stable/zero3.html' AS source
  FROM advice_facts
 WHERE about_demand AND peak_allocated_bytes > 0 AND optimizer_state_bytes > 0
   AND model_state_bytes * 2 >= peak_allocated_bytes;

-- name: 8bit-optimizer
SELECT finding_id,
       optimizer_state_bytes * 3 / 4 AS saving_bytes,
       optimizer_state_bytes, peak_allocated_bytes,
       '8-bit optimizer (bitsandbytes)' AS title,
       'optimizer = bitsandbytes.optim.AdamW8bit(model.parameters(), lr=lr)  # or TrainingArguments(optim="adamw_bnb_8bit")' AS setting,
       'Optimizer state was {optimizer_state_bytes} of the {peak_allocated_bytes} peak; 8-bit Adam keeps 2 bytes a parameter instead of 8, a quarter of it.' AS evidence,
       'https://huggingface.co/docs/bitsandbytes/main/optimizers' AS source
  FROM advice_facts
 WHERE about_demand AND peak_allocated_bytes > 0 AND optimizer_state_bytes * 10 >= peak_allocated_bytes;

-- name: memory-efficient-attention
SELECT finding_id,
       attention_temporary_bytes AS saving_bytes,
       attention_temporary_bytes, peak_allocated_bytes,
       'Memory-efficient attention (SDPA / FlashAttention)' AS title,
       'out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)  # Hugging Face: attn_implementation="sdpa"' AS setting,
       'Temporaries of softmax and batched matmuls (attention''s score matrices) were {attention_temporary_bytes} of the {peak_allocated_bytes} peak; fused attention never materialises them.' AS evidence,
       'https://docs.pytorch.org/docs/stable/nn.attention.html' AS source
  FROM advice_facts
 WHERE about_demand AND peak_allocated_bytes > 0 AND attention_temporary_bytes * 20 >= peak_allocated_bytes;

-- An inference server preallocates its KV cache to a share of the device
-- (vLLM's --gpu-memory-utilization, SGLang's --mem-fraction-static):
-- the allocator's knobs are not what sizes its memory, its own settings
-- are (below). A CUDA graph's private pool is reserved memory no other
-- allocation may use: expandable segments do not make it usable, so its
-- free bytes (private_in_cache_bytes, where cache_free_bytes counts them)
-- are not part of the saving; the message's own "reserved but
-- unallocated" already leaves them out (PyTorch counts them allocated).
-- name: expandable-segments
SELECT finding_id,
       cache_free_bytes - private_in_cache_bytes AS saving_bytes,
       cache_free_bytes, reserved_bytes, allocated_bytes, private_pool_free_bytes,
       'Expandable segments' AS title,
       'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True' AS setting,
       'PyTorch had reserved {reserved_bytes} but allocated {allocated_bytes}: {cache_free_bytes} held in its cache, cut into blocks; segments that grow in place instead of being cut into new ones would have left it usable.'
       || CASE WHEN private_in_cache_bytes > 0
               THEN ' Of that cache, {private_pool_free_bytes} is free in private pools (CUDA graphs''): only their graphs may use it, and it is not counted.'
               WHEN private_pool_free_bytes > 0
               THEN ' A further {private_pool_free_bytes} free in private pools (CUDA graphs''), which PyTorch counts as allocated, only their graphs may use: not counted.'
               ELSE '' END AS evidence,
       'https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf' AS source
  FROM advice_facts
 WHERE cache_free_bytes > 0 AND NOT inference_server
   AND (fragmented OR (kind = 'near-capacity' AND cache_free_bytes * 20 >= capacity_bytes));

-- name: max-split-size
SELECT finding_id,
       cache_free_bytes - private_in_cache_bytes - largest_free_block_bytes AS saving_bytes,
       cache_free_bytes, largest_free_block_bytes, requested_bytes,
       max(21, requested_bytes / 1048576) AS split_mb,
       'Stop large blocks being split (max_split_size_mb)' AS title,
       'PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:{split_mb}' AS setting,
       'The cache held {cache_free_bytes} free but its largest free block was {largest_free_block_bytes}, under the {requested_bytes} asked for; blocks of {split_mb} MiB or more left whole would have kept the rest usable (a last resort: prefer expandable segments).' AS evidence,
       'https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf' AS source
  FROM advice_facts
 WHERE fragmented AND NOT inference_server
   AND largest_free_block_bytes IS NOT NULL AND requested_bytes IS NOT NULL
   AND largest_free_block_bytes < requested_bytes
   AND cache_free_bytes > largest_free_block_bytes;

-- name: garbage-collection-threshold
SELECT finding_id,
       -- (a private pool's free blocks are its graphs' until they go:
       -- the collection cannot return them)
       min(reserved_bytes - max(allocated_bytes, capacity_bytes * 8 / 10),
           reserved_bytes - allocated_bytes - private_in_cache_bytes) AS saving_bytes,
       reserved_bytes, allocated_bytes, capacity_bytes,
       'Reclaim the cache early (garbage_collection_threshold)' AS title,
       'PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.8' AS setting,
       'The job reserved {reserved_bytes} of {capacity_bytes} with {allocated_bytes} allocated; above 80 % of the device the allocator would free unused cached blocks instead of waiting for a failed cudaMalloc.' AS evidence,
       'https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf' AS source
  FROM advice_facts
 WHERE kind = 'near-capacity' AND NOT inference_server
   AND capacity_bytes > 0 AND reserved_bytes IS NOT NULL
   AND allocated_bytes IS NOT NULL
   AND reserved_bytes > max(allocated_bytes, capacity_bytes * 8 / 10);

-- name: del-references
SELECT finding_id,
       leak_bytes AS saving_bytes,
       leak_bytes, leak_per_step_bytes, leak_steps,
       'Drop references kept across steps (del)' AS title,
       'del outputs, loss  # at the end of each step; keep no tensors in lists or attributes across steps' AS setting,
       'Allocated memory grew {leak_per_step_bytes} a step over {leak_steps} steps: {leak_bytes} kept from step to step that freeing each step''s tensors would release.' AS evidence,
       'https://pytorch.org/docs/stable/notes/faq.html' AS source
  FROM advice_facts
 WHERE leaking AND leak_bytes > 0;

-- name: detach-logged-loss
SELECT finding_id,
       leak_bytes AS saving_bytes,
       leak_bytes, activation_never_freed_bytes, leak_steps,
       'Log losses as numbers, not tensors' AS title,
       'total_loss += loss.item()  # not: total_loss += loss (it keeps each step''s graph)' AS setting,
       'Memory grew {leak_bytes} over {leak_steps} steps and {activation_never_freed_bytes} of activations were never freed: a graph kept alive, as a loss accumulated as a tensor keeps it.' AS evidence,
       'https://pytorch.org/docs/stable/notes/faq.html' AS source
  FROM advice_facts
 WHERE leaking AND leak_bytes > 0 AND activation_never_freed_bytes > 0;

-- name: no-grad-inference
SELECT finding_id,
       activation_bytes + autograd_detail_bytes AS saving_bytes,
       activation_bytes, autograd_detail_bytes, peak_allocated_bytes,
       'Run inference under torch.inference_mode()' AS title,
       'with torch.inference_mode():  # or torch.no_grad()' || char(10) || '    out = model(batch)' AS setting,
       'The job ran forward passes without a backward pass yet kept {activation_bytes} of activations for autograd at its {peak_allocated_bytes} peak; without autograd they are freed as soon as used.' AS evidence,
       'https://docs.pytorch.org/docs/stable/generated/torch.no_grad.html' AS source
  FROM advice_facts
 WHERE about_demand AND NOT inference_server AND has_forward AND NOT has_backward
   AND activation_bytes + autograd_detail_bytes > 0;

-- name: free-other-processes
SELECT finding_id,
       other_bytes AS saving_bytes,
       other_bytes, coalesce(other_pid, 0) AS other_pid,
       -- No input lists the processes: what they held is inferred (ranked
       -- after the savings the job's figures measure: rank_advice).
       (other_processes_bytes IS NULL) AS inferred,
       'Free the GPU from other processes' AS title,
       'nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv  # then stop them, or run on a GPU of its own (CUDA_VISIBLE_DEVICES)' AS setting,
       -- Listed processes are a fact; the rest is inferred: what was in use
       -- beyond PyTorch's memory less a CUDA context's 1 GiB, said so.
       CASE WHEN other_processes_bytes IS NOT NULL
            THEN 'Other processes held {other_bytes} of the device when the job ran out of memory; a GPU to itself gives the job that memory.'
            WHEN smi_used_bytes IS NOT NULL AND reserved_bytes IS NOT NULL
            THEN 'nvidia-smi counted {other_bytes} in use beyond PyTorch''s reserved memory and about 1 GiB for the CUDA context when the job ran out of memory: most likely other processes. A GPU to itself gives the job that memory.'
            ELSE 'Beyond PyTorch''s own memory and about 1 GiB for the CUDA context, {other_bytes} of the device was in use when the job ran out of memory, which no input names: most likely other processes (nvidia-smi at the time would say). A GPU to itself gives the job that memory.'
       END AS evidence,
       'https://pytorch.org/docs/stable/torch_cuda_memory.html' AS source
  FROM advice_facts
 WHERE other_process AND other_bytes > 0
   -- An inconsistent OOM's "other process" from capacity - free -
   -- reserved alone rests on an assumed context: a limit is likelier
   -- (memory-limits); processes the message or nvidia-smi lists still count.
   AND NOT (kind = 'inconsistent' AND other_processes_bytes IS NULL AND smi_used_bytes IS NULL);

-- An inconsistent OOM: CUDA said more was free than the request, yet it
-- was refused. A limit below the device refused it: a memory fraction
-- (set_per_process_memory_fraction; the message then says "allowed"), a
-- MIG slice, MPS's per-client limit, a container's or a scheduler's
-- share of the GPU. The saving: what CUDA said was free.
-- name: memory-limits
SELECT finding_id,
       device_free_bytes AS saving_bytes,
       device_free_bytes, requested_bytes, capacity_bytes,
       'Find the limit below the device' AS title,
       'python -c "import torch; print(torch.cuda.mem_get_info())"  # what this process may use; then: torch.cuda.set_per_process_memory_fraction(1.0), nvidia-smi -L (a MIG slice), CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, the container''s GPU memory limit' AS setting,
       'CUDA said {device_free_bytes} was free, yet a request of {requested_bytes} was refused: something below the device''s {capacity_bytes} set the limit (a memory fraction, a MIG slice, MPS''s per-client limit, a container''s share), not the memory in use. Raising that limit gives the job what CUDA said was free.' AS evidence,
       'https://docs.pytorch.org/docs/stable/generated/torch.cuda.set_per_process_memory_fraction.html' AS source
  FROM advice_facts
 WHERE kind = 'inconsistent' AND is_oom AND device_free_bytes > 0 AND requested_bytes > 0
   AND device_free_bytes > requested_bytes
   -- (a constant gate, tested once: the facts are scanned only when it holds)
   AND EXISTS (SELECT 1 FROM finding WHERE kind = 'inconsistent');

-- A single request of a quarter of the device or more (oversized-request,
-- primary or secondary): one operation's whole batch in one tensor.
-- Computed in two chunks each needs half; a smaller batch or offloading
-- what is resident does as much.
-- name: split-oversized-request
SELECT finding_id,
       requested_bytes / 2 AS saving_bytes,
       requested_bytes, capacity_bytes, requested_bytes * 100 / capacity_bytes AS request_pct,
       'Split the oversized request (chunks, a smaller batch, offload)' AS title,
       'out = torch.cat([f(chunk) for chunk in x.chunk(2)])  # or half the batch; or offload: device_map="auto" / CPU offload of what stays resident' AS setting,
       'One request asked for {requested_bytes}, {request_pct} % of the {capacity_bytes} device: a tensor that size holds an operation''s whole batch at once. In two chunks each asks for {saving_bytes}; a smaller batch does the same, and offloading resident weights makes room for it.' AS evidence,
       'https://pytorch.org/docs/stable/notes/faq.html' AS source
  FROM advice_facts
 WHERE oversized AND is_oom AND requested_bytes > 0 AND capacity_bytes > 0
   -- (a constant gate, tested once: the facts are scanned only when it holds)
   AND EXISTS (SELECT 1 FROM finding WHERE kind = 'oversized-request'
                  OR instr(secondary, '"oversized-request"') > 0);

-- vLLM preallocates --gpu-memory-utilization (0.90 by default) of the
-- device for weights, activations and its KV cache; an OOM while serving
-- is memory outside that share running short. Lower it by the points of
-- the device the request lacked (rounded up): the KV cache gives them
-- back (it must be larger), at the cost of fewer tokens cached.
-- name: vllm-gpu-memory-utilization
SELECT finding_id, points * capacity_bytes / 100 AS saving_bytes,
       points, shortfall_bytes, capacity_bytes, server_kv_cache_bytes,
       'Lower vLLM''s --gpu-memory-utilization by ' || points || ' points' AS title,
       'vllm serve MODEL --gpu-memory-utilization ' || printf('%.2f', 0.90 - points / 100.0)
           || '  # the default 0.90 less ' || printf('%.2f', points / 100.0) || '; or as much below the value set' AS setting,
       'vLLM gave its KV cache {server_kv_cache_bytes} at start-up, filling its share of the {capacity_bytes} device; the failed request lacked {shortfall_bytes}. {points} points less of the device, {saving_bytes}, leave that outside the cache.' AS evidence,
       'https://docs.vllm.ai/en/latest/configuration/conserving_memory.html' AS source
  FROM (SELECT *, max(1, (shortfall_bytes * 100 + capacity_bytes - 1) / capacity_bytes) AS points
          FROM advice_facts
         WHERE server_framework = 'vllm' AND is_oom AND shortfall_bytes > 0 AND capacity_bytes > 0
           -- (a constant gate, tested once: no scan of the facts without a server)
           AND (EXISTS (SELECT 1 FROM server_memory) OR EXISTS (SELECT 1 FROM peak_category WHERE category = 'kv_cache'))
        )
 WHERE points <= 80 AND points * capacity_bytes / 100 < coalesce(server_kv_cache_bytes, 0);

-- vLLM's activations grow with the sequences it batches (--max-num-seqs)
-- and the longest one (--max-model-len): half as many halve the
-- activations its profiling run measured (the log's), or those live at
-- the peak.
-- name: vllm-max-num-seqs
SELECT finding_id,
       coalesce(server_activation_peak_bytes, activation_bytes + temporary_bytes) / 2 AS saving_bytes,
       coalesce(server_activation_peak_bytes, activation_bytes + temporary_bytes) AS activation_peak_bytes,
       'Batch fewer sequences in vLLM (--max-num-seqs, --max-model-len)' AS title,
       'vllm serve MODEL --max-num-seqs 128 --max-model-len 8192  # half the defaults or of what you set; the longest prompt served must fit --max-model-len' AS setting,
       'vLLM''s activations peaked at {activation_peak_bytes}, growing with the sequences batched together and the longest of them; half as many sequences (--max-num-seqs) or a shorter limit (--max-model-len) need about half: {saving_bytes}.' AS evidence,
       'https://docs.vllm.ai/en/latest/configuration/conserving_memory.html' AS source
  FROM advice_facts
 WHERE server_framework = 'vllm' AND about_demand
   AND coalesce(server_activation_peak_bytes, activation_bytes + temporary_bytes) > 0
   -- (a constant gate, tested once: no scan of the facts without a server)
   AND (EXISTS (SELECT 1 FROM server_memory) OR EXISTS (SELECT 1 FROM peak_category WHERE category = 'kv_cache'));

-- SGLang's --mem-fraction-static (which it chooses from the GPU when not
-- given) is its share for weights and the KV cache pool: the same rule as
-- vLLM's utilization.
-- name: sglang-mem-fraction-static
SELECT finding_id, points * capacity_bytes / 100 AS saving_bytes,
       points, shortfall_bytes, capacity_bytes, server_kv_cache_bytes,
       'Lower SGLang''s --mem-fraction-static by ' || points || ' points' AS title,
       'python -m sglang.launch_server --model-path MODEL --mem-fraction-static F  # F: the mem_fraction_static its start-up log states, less '
           || printf('%.2f', points / 100.0) AS setting,
       'SGLang gave its KV cache pool {server_kv_cache_bytes} at start-up; the failed request lacked {shortfall_bytes}. {points} points less of the {capacity_bytes} device, {saving_bytes}, leave that to activations and CUDA graphs.' AS evidence,
       'https://docs.sglang.ai/advanced_features/server_arguments.html' AS source
  FROM (SELECT *, max(1, (shortfall_bytes * 100 + capacity_bytes - 1) / capacity_bytes) AS points
          FROM advice_facts
         WHERE server_framework = 'sglang' AND is_oom AND shortfall_bytes > 0 AND capacity_bytes > 0
           -- (a constant gate, tested once: no scan of the facts without a server)
           AND (EXISTS (SELECT 1 FROM server_memory) OR EXISTS (SELECT 1 FROM peak_category WHERE category = 'kv_cache'))
        )
 WHERE points <= 80 AND points * capacity_bytes / 100 < coalesce(server_kv_cache_bytes, 0);
