// Apart from tick-array.ts so that `bench tick --batch` checks its sizes without loading the brain.

/** Most tick requests in one POST /ticks body. */
export const MAX_BATCH_TICKS = 1024;
