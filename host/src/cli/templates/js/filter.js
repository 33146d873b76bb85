// {{name}}: a GRW filter. It passes events of objects that carry the label
// named in its configuration, {"label": "team"}. Change `decide` to decide
// otherwise.

import { exportFilter, Interest } from "./grw-sdk/grw-sdk.js";

export const plugin = {
  init(config) {
    this.label = config.string("label", { required: true });
    return new Interest();
  },

  decide(event) {
    return event.label(this.label) !== undefined;
  },
};

export const filter = exportFilter(plugin);
