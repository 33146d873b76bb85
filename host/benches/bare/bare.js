// The restart filter on componentize-js's bare bindings (see README.md).

const STATUS_LISTS = [["status", "containerStatuses"], ["status", "initContainerStatuses"]];
let read = false;

export const filter = {
  init(config) {
    read = JSON.parse(config).read === true;
    return { kinds: [{ group: undefined, version: undefined, kind: "Pod" }], eventTypes: [] };
  },
  decide(event, object, oldObject) {
    if (!read) return true;
    let total = 0;
    for (const path of STATUS_LISTS) {
      const text = object.get(path);
      if (text === undefined) continue;
      for (const status of JSON.parse(text)) total += status.restartCount ?? 0;
    }
    return total >= 1;
  },
};
