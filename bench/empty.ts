// An empty program: the baseline for one-shot CLI latency (`deno run -A bench/empty.ts`).
