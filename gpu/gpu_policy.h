/* gpu_policy.h - every tuning constant of the CUDA backend: tile sizes, threads per block, rows
 * per thread, fusion depth. Kernels and dispatch read their shapes from here only, so a change
 * of policy is a change of this file. Sizes are in cells unless a unit is named. */
#ifndef GPU_POLICY_H
#define GPU_POLICY_H

/* ---- Horizon tile-sum kernel (gpu_horizon.cu) ---- */
/* Threads per block (a multiple of 32). 320 rather than 256: the large scenario's tiles hold
 * 256 +- 16 agents, so with 256 threads about half of them took a second round for a few
 * agents; and a small world's tile (512^2: ~100 agents) loads its region with 10 warps instead
 * of 8. H200, `horizon run`, 256 -> 320 threads: large scenario 4,140 -> 4,290 steps/s, the
 * default 40,000 -> 45,400 (384 threads: 4,068 and 44,700). -DGPU_HZ_THREADS=N (and
 * -DGPU_HZ_MINB_SMALL=N) at build time re-measure it. */
#ifndef GPU_HZ_THREADS
#define GPU_HZ_THREADS 320
#endif
#define GPU_HZ_TILE_LARGE 64        /* tile side when its shared memory fits */
#define GPU_HZ_TILE_SMALL 32        /* tile side for large radii */
/* Small worlds take smaller tiles (halving from the above) until they have this many, so that
 * the tile-sum kernel's blocks spread over the multiprocessors (132 on an H100/H200): 512^2
 * runs 256 tiles of 32 instead of 64 of 64, 64^2 16 tiles of 16 (measured in gpu/BENCH.md). */
#define GPU_HZ_TILES_WANT 132
#define GPU_HZ_TILE_MIN 16
#define GPU_HZ_LOAD_ROWS 4          /* region rows a warp requests at once when loading a tile */
/* Resident blocks per multiprocessor the small-disk kernels (r <= 9, 32-bit sums) are compiled
 * for: 4 blocks of 320 threads cap them at 51 registers with no spills (5 would spill a few
 * bytes and measured 3% slower on the default scenario, 2% faster on the large one; shared
 * memory allows 7 at r = 8, ~29 KB a block). */
#ifndef GPU_HZ_MINB_SMALL
#define GPU_HZ_MINB_SMALL 4
#endif
/* Worlds of at least GPU_HZ_MANY_TILES tiles (the large scenario's 4096) run the small-disk
 * kernels compiled for GPU_HZ_MINB_MANY blocks: there more resident blocks hide more of a
 * tile's latency chain than the few spilled bytes cost: the large scenario 4,644-4,654
 * steps/s against 4,569-4,575 with 4 (H200, three rounds by turns); 2048^2 (1,024 tiles)
 * 14,114-14,168 against 13,925-13,958; 1024^2 and 512^2 (256 tiles each) lost 3-4%, so they
 * keep 4. */
#ifndef GPU_HZ_MINB_MANY
#define GPU_HZ_MINB_MANY 5
#endif
#ifndef GPU_HZ_MANY_TILES
#define GPU_HZ_MANY_TILES 1024
#endif
/* The radius compiled into an instance of the tile-sum kernel (the default and the large
 * scenario's): its sparse sums are straight-line code, the half-widths constants
 * (gpu_horizon_block.cuh, sparse_sums_c). H200, `horizon run` by turns against the general
 * loop (HORIZON_HZ_RC=0): the large scenario 5,358-5,362 steps/s against 4,761-4,775, the
 * default 59,940-60,242 against 52,484-52,742 (gpu/BENCH.md, round 11). */
#ifndef GPU_HZ_RC
#define GPU_HZ_RC 8
#endif
/* The same for larger disks (64-bit sums): 3 blocks of ~71 KB fit at r = 32 (T = 64). */
#define GPU_HZ_MINB_LARGE 3
#define GPU_HZ_SMEM_MAX (227 * 1024) /* shared memory per block on H100/H200 (opt-in) */
/* Dense mode costs ~ (T+2)^2 disk sums per tile; sparse ~ agents * 9 sums with scattered
 * shared-memory loads. Dense is chosen when agents/cell * 9 * KAPPA > (1 + 2/T)^2, with KAPPA
 * the measured cost ratio of a sparse to a dense sum: on an H200 at 1M agents on 4096^2
 * (6.25%) the int64 kernels took 0.43 ms sparse and 0.78 ms dense at r = 8 (about 2x at r = 32
 * too), which puts the crossover near 11% density. The 32-bit kernels measure dense/sparse 1.30x
 * at r = 8 and 2.86x at r = 32 (crossovers near 8% and 18%); see BENCH.md. */
#define GPU_HZ_KAPPA 1.1
/* Default tile mapping (GPU_MAP_*), the winner of `horizon bench`'s mapping section. */
#define GPU_HZ_MAPPING 3
/* The SELL-C-sigma mapping (GPU_MAP_SELL, gpu_horizon_sell.cuh): tiles sorted by agent count
 * within windows of SIGMA consecutive tiles (one block ranks a window: at most 1024), and taken
 * C at a time (a slice), so that a block's rounds of GPU_HZ_THREADS agents are full; a block
 * holds C regions at once (C times a tile's shared memory). C = 2: two tiles of the large
 * scenario's ~256 agents, and at r = 8 a block's ~56 KB leave 3 blocks per multiprocessor.
 * Measured (H200, gpu/BENCH.md round 7): 7.9% slower than the dynamic queue on the large
 * scenario, so it is not the default. */
#define GPU_HZ_SELL_SIGMA 128
#define GPU_HZ_SELL_C 2

/* ---- Agent binning (gpu_bins.cu) ---- */
#define GPU_BIN_THREADS 256
#define GPU_BIN_ITEMS 4 /* sorted keys per thread in the run-start kernel */
/* The one-block scan of the step's tile counts: 1024 x 4 = 4096 tiles a round, one round at the
 * large scenario. */
#define GPU_BIN_SCAN_THREADS 1024
#define GPU_BIN_SCAN_ITEMS 4

/* ---- Jacobi, one sweep per pass (gpu_jacobi.cu) ---- */
#define GPU_JS_WARPS 4  /* warps per block, stacked in y */
#define GPU_JS_ROWS 16  /* rows each warp walks down, keeping N/C/S in registers */
/* Rows loaded ahead at once (16-byte loads in flight per thread), 4 or 8: at 16384^2 on an H200
 * 8 ran 91.6% of the copy bandwidth against 89.9% for 4 (same process; 85 registers, 5 blocks
 * of 128 per multiprocessor, so ~25% more bytes in flight per multiprocessor). */
#define GPU_JS_BATCH 8

/* ---- Jacobi, K fused sweeps per pass (temporal blocking) ---- */
#define GPU_JF_RW 128   /* region width in shared memory: 32 lanes x float4 */
#define GPU_JF_RH 64    /* region height for K >= 3 */
/* Region height for K <= 2 (smaller blocks, more of them resident). Re-measured with the
 * vectorised pass (H200, round 7): 64 rows ran the large scenario 0.9% and the default 0.6%
 * slower. -DGPU_JF_RH_SMALL=N at build time measures it again. */
#ifndef GPU_JF_RH_SMALL
#define GPU_JF_RH_SMALL 32
#endif
#define GPU_JF_THREADS 256 /* 8 warps, each owns RH/8 rows */
#define GPU_JF_KMAX 8   /* most sweeps per pass (the halo); the written tile is RW-2K x RH-2K */
/* The persistent form of the two-sweep vector pass (gpu_jacobi.cu, jp_kernel): 48 KB of shared
 * memory a block, so 4 a multiprocessor; used where each block gets at least GPU_JP_TILES_MIN
 * tiles (the default scenario's 95 tiles stay with one block a tile). */
#define GPU_JP_MINB 4
#define GPU_JP_TILES_MIN 2

/* ---- Statistics (gpu_stats.cu) ---- */
#define GPU_ST_COLS 32    /* columns per block (one warp sums them in row order) */
#define GPU_ST_ROWS 16    /* rows each loader warp stages per round (loads in flight) */
#define GPU_ST_THREADS 256
/* Grids of at most GPU_ST_ONE_WARP_ROWS rows take the one-warp column sums (st_colsum1_kernel)
 * instead of the eight-warp blocks above (measured when they ran beside the next step).
 * Statistics every step, H100,
 * `horizon run` by turns (three rounds, density 0.1): 512^2 (the default) 40,930-40,971 steps/s
 * against 39,274-40,042, 1024^2 23,182-23,692 against 21,347-23,015; but 2048^2 8,418-8,494
 * against 8,480-8,577 and the large scenario 3,466-3,530 against 3,613-3,682 (there one warp's
 * chain and copies take ~92 us for 4,096 rows, the eight warps' ~58). Then: rows a batch of its
 * copies, batches in its ring (DEPTH - 1 in flight while one is added), and its registers. */
#define GPU_ST_ONE_WARP_ROWS 1024
#define GPU_ST_BATCH 16
#define GPU_ST_DEPTH 8
#define GPU_ST_ONE_WARP_REGS 40
#define GPU_EW_THREADS 256 /* element-wise kernels (agents, decay, paint, compose) */
/* The column sums a warp stages at once to add a step's field total (gpu_stats_totals): 8 KB. */
#define GPU_ST_TOTAL_CHUNK 1024
/* Deferred statistics (gpu_stats_defer): worlds of at most GPU_ST_DEFER_CELLS_MAX cells defer a
 * batched step's statistics (but its residual) to a pass over up to GPU_ST_DEFER_SLOTS steps
 * at once, whose snapshots take at most GPU_ST_DEFER_BYTES; the hashing of one step takes at
 * most GPU_ST_DEFER_BLOCKS blocks. */
#define GPU_ST_DEFER_CELLS_MAX (1 << 19)
#define GPU_ST_DEFER_SLOTS 64
#define GPU_ST_DEFER_BYTES ((size_t)64 << 20)
#define GPU_ST_DEFER_BLOCKS 64

/* ---- Programmatic dependent launch (gpu_pdl.cuh) ---- */
/* Worlds of at most this many cells launch the step's kernels with programmatic dependence:
 * each kernel's blocks are scheduled while the one before it finishes, instead of after it (a
 * small world's step is a chain of short kernels). H200, `horizon run`, three rounds by turns
 * against HORIZON_PDL=0 in one device call: 128^2 +9.5%, 512^2 (the default) +7.2% (52,251-
 * 52,535 against 48,788-48,960 steps/s), 1024^2 +2.6%, 2048^2 +0.4%, 4096^2 (the large
 * scenario) +0.3%; statistics every step at 512^2 +3.5%. No size measured lost; larger worlds
 * (not measured) keep the plain launches. */
#define GPU_PDL_CELLS_MAX (1 << 24)

/* ---- Batched steps (gpu_step_batch.cu) ---- */
/* Steps captured in one graph when a batch has that many in a row with the same statistics
 * choice (gpu_tuning.steps_per_graph overrides it, 1..GPU_BATCH_GRAPH_MAX): one launch and no
 * gap between graphs for each of them. Measured on an H200 (gpu/BENCH.md): runs of 8 gained
 * only 2-3% over one step a graph at 64^2 and 512^2 (the gaps between graphs are under 1 us;
 * the kernels of a step are the cost), and every instance then also captures 8-step graphs,
 * which a sweep of short runs pays per run: so one step a graph at first (round 7 measured
 * runs of 8 at +4.9% on the default scenario in `horizon run`: see GPU_BATCH_RUN_AFTER). */
#define GPU_BATCH_GRAPH_STEPS 1
/* An instance that has run GPU_BATCH_RUN_AFTER batched steps captures runs of
 * GPU_BATCH_RUN_STEPS instead: a long run pays the capture (about a millisecond) once, a sweep's
 * short runs never do. */
#define GPU_BATCH_RUN_STEPS 8
#define GPU_BATCH_RUN_AFTER 4096
#define GPU_BATCH_GRAPH_MAX 32

/* ---- The resident kernel of small worlds (gpu_step_resident.cu) ---- */
/* Batches without statistics of worlds up to this many cells run in one cooperative kernel
 * (gpu_tuning.resident overrides it). Measured on an H200 against one graph a step (density
 * 0.1, gpu/BENCH.md): 64^2 +8.6%, 128^2 and 256^2 even, 512^2 -12%, 1024^2 -26%: the
 * grid barriers between phases cost more than the launches they replace once a step has
 * hundreds of blocks of work. Since the step's kernels overlap (GPU_PDL_CELLS_MAX), graphs win
 * at 64^2 too (`horizon bench --batch-only`: 58,880-59,087 steps/s by graphs against
 * 54,827-54,990 resident), but each instance captures its graphs first: so the resident kernel
 * serves only an instance's first GPU_BATCH_RUN_AFTER batched steps (the short runs of a
 * sweep need no capture), and longer runs go on by graphs (gpu_step_resident_use). */
/* (Worlds whose state fits the one-block kernel below take that instead.) */
#define GPU_RES_CELLS_MAX (1 << 13)
/* Its grid: a block per tile, and at least one per this many cells a thread (sweeps), up to the
 * blocks the device holds at once. */
#define GPU_RES_CELLS_PER_THREAD 16
#define GPU_RES_SCAN_ITEMS 4 /* tile counts per thread in a round of the scan */
#define GPU_RES_SWEEP_CELLS 8 /* cells of a sweep a thread loads before it stores them */

/* The one-block kernel of tiny worlds (gpu_step_resident.cu): a batch's whole state (field,
 * occupancy, claim words, prefix rows, agents) in one block's shared memory, the phases of a
 * step separated by block barriers, GPU_TINY_THREADS threads. It runs every batch without
 * statistics of worlds of at most GPU_TINY_CELLS_AUTO cells whose state fits a block's shared
 * memory (gpu_tuning.resident overrides the size). */
#ifndef GPU_TINY_THREADS
#define GPU_TINY_THREADS 1024
#endif
#define GPU_TINY_CELLS_AUTO (1 << 13)
#define GPU_TINY_PW_MAX 256 /* region row pitch: two groups of four cells a lane (load_prefix) */

/* ---- The viewer's reads (gpu_probe.cu); not tuned by measurement yet ---- */
#define GPU_PROBE_THREADS 256 /* sampled columns per block of the region-sums kernel */
/* Most blocks of a grid-stride loop over queries or agents: 4096 x 256 = 1M threads, several
 * per resident thread slot of an H100/H200 (132 SMs x 2048), so larger n only loops. */
#define GPU_PROBE_BLOCKS_MAX 4096
/* read_cells finds the agents of at most this many cells by one pass over the agents' cells
 * (n compares per agent, the cells in shared memory); more use a temporary cell -> agent map
 * (4 B/cell, a memset and a scatter). A probe asks for one cell; up to 64 the scan's compares
 * (on chip, per agent) should cost less than the map's write of every cell. */
#define GPU_PROBE_SCAN_MAX 64

/* ---- Model engine (gpu_model*.cu) ---- */
#define GPU_MD_THREADS 256 /* threads of a sense block (one tile) */
/* Tile sides tried in order until the sense block's shared memory fits GPU_MD_SMEM_MAX: a
 * 64-cell tile holds ~256 agents at the large scenario's density (6.25%), one per thread (a
 * thread sums an agent's 9 candidates); a 32-cell tile ~64, and a larger halo share. */
#define GPU_MD_TILE 64
#define GPU_MD_TILE_MIN 16
/* Agents a sense block lists per round (8 B each in shared memory): 1024 covers a 64-cell tile
 * up to 25% density in one round. */
#define GPU_MD_CHUNK 1024
#define GPU_MD_SMEM_MAX (226 * 1024) /* dynamic; 227 KB a block with the static ~400 B */
/* The sense kernel's launch bounds: GPU_MD_MINB_HIGH resident blocks per multiprocessor (48
 * registers, a few bytes spilled) or 1 (58 registers: 4 blocks); GPU_MD_MINB is the default of
 * the two (the bench's models section times both). */
#define GPU_MD_MINB_HIGH 5
#define GPU_MD_MINB GPU_MD_MINB_HIGH
/* Region rows a warp of the sense kernel loads at once (codes; prefix rows of a species that
 * senses one field, half as many for two fields), as the fast path's GPU_HZ_LOAD_ROWS: a tile's
 * region is ~80 scattered rows, so latency, not bandwidth, is the cost of its loads. */
#define GPU_MD_LOAD_ROWS 4
#define GPU_MD_EW_THREADS 256 /* per-agent and per-cell kernels */
/* Agents a thread of the move kernel takes, their random claim-word reads in flight at once
 * (ncu on wolf-sheep-grass at 4096^2, one agent a thread: 631 cycles per issued instruction,
 * 1.2 TB/s, stalled on those reads). */
#define GPU_MD_MOVE_ITEMS 4

#endif
