// js-restart-filter: passes Pod events whose containers have restarted at
// least `minRestarts` times in total, init containers included.
//
// Configuration: {"minRestarts": N}, an integer >= 0, default 1.
//
// It reads only the two container status lists through GRW's `get`, never
// the whole Pod.

import { exportFilter, Interest } from "../../sdk/js/grw-sdk.js";

const STATUS_LISTS = ["status.containerStatuses", "status.initContainerStatuses"];

/** The restarts of all containers in the event's Pod. */
export function totalRestarts(event) {
  let total = 0;
  for (const path of STATUS_LISTS) {
    const statuses = event.field(path);
    if (!Array.isArray(statuses)) continue;
    for (const status of statuses) {
      const count = status?.restartCount;
      if (Number.isSafeInteger(count) && count > 0) total += count;
    }
  }
  return total;
}

export const restartFilter = {
  init(config) {
    this.minRestarts = config.int("minRestarts", { default: 1, minimum: 0 });
    return new Interest({ kinds: ["Pod"] });
  },

  decide(event) {
    return totalRestarts(event) >= this.minRestarts;
  },
};

export const filter = exportFilter(restartFilter);
