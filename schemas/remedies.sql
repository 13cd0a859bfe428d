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
-- advice's figures JSON). Shares of the peak compare with
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
       'Activations were {activation_bytes} of the {peak_allocated_bytes} peak across {layers} modules; keeping one layer''s inputs in sqrt(L) recomputes the rest (about one extra forward pass).' AS evidence,
       'https://huggingface.co/docs/transformers/perf_train_gpu_one#gradient-checkpointing' AS source
  FROM advice_facts
 WHERE about_demand AND layers >= 2 AND peak_allocated_bytes > 0
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
 WHERE about_demand AND peak_allocated_bytes > 0
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

-- name: expandable-segments
SELECT finding_id,
       cache_free_bytes AS saving_bytes,
       cache_free_bytes, reserved_bytes, allocated_bytes,
       'Expandable segments' AS title,
       'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True' AS setting,
       'PyTorch had reserved {reserved_bytes} but allocated {allocated_bytes}: {cache_free_bytes} held in its cache, cut into blocks; segments that grow in place instead of being cut into new ones would have left it usable.' AS evidence,
       'https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf' AS source
  FROM advice_facts
 WHERE cache_free_bytes > 0
   AND (fragmented OR (kind = 'near-capacity' AND cache_free_bytes * 20 >= capacity_bytes));

-- name: max-split-size
SELECT finding_id,
       cache_free_bytes - largest_free_block_bytes AS saving_bytes,
       cache_free_bytes, largest_free_block_bytes, requested_bytes,
       max(21, requested_bytes / 1048576) AS split_mb,
       'Stop large blocks being split (max_split_size_mb)' AS title,
       'PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:{split_mb}' AS setting,
       'The cache held {cache_free_bytes} free but its largest free block was {largest_free_block_bytes}, under the {requested_bytes} asked for; blocks of {split_mb} MiB or more left whole would have kept the rest usable (a last resort: prefer expandable segments).' AS evidence,
       'https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf' AS source
  FROM advice_facts
 WHERE fragmented AND largest_free_block_bytes IS NOT NULL AND requested_bytes IS NOT NULL
   AND largest_free_block_bytes < requested_bytes
   AND cache_free_bytes > largest_free_block_bytes;

-- name: garbage-collection-threshold
SELECT finding_id,
       reserved_bytes - max(allocated_bytes, capacity_bytes * 8 / 10) AS saving_bytes,
       reserved_bytes, allocated_bytes, capacity_bytes,
       'Reclaim the cache early (garbage_collection_threshold)' AS title,
       'PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.8' AS setting,
       'The job reserved {reserved_bytes} of {capacity_bytes} with {allocated_bytes} allocated; above 80 % of the device the allocator would free unused cached blocks instead of waiting for a failed cudaMalloc.' AS evidence,
       'https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf' AS source
  FROM advice_facts
 WHERE kind = 'near-capacity' AND capacity_bytes > 0 AND reserved_bytes IS NOT NULL
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
 WHERE about_demand AND has_forward AND NOT has_backward
   AND activation_bytes + autograd_detail_bytes > 0;

-- name: free-other-processes
SELECT finding_id,
       other_bytes AS saving_bytes,
       other_bytes, coalesce(other_pid, 0) AS other_pid,
       'Free the GPU from other processes' AS title,
       'nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv  # then stop them, or run on a GPU of its own (CUDA_VISIBLE_DEVICES)' AS setting,
       'Other processes held {other_bytes} of the device when the job ran out of memory; a GPU to itself gives the job that memory.' AS evidence,
       'https://pytorch.org/docs/stable/torch_cuda_memory.html' AS source
  FROM advice_facts
 WHERE other_process AND other_bytes > 0;
