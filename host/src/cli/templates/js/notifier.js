// {{name}}: a GRW notifier. It posts {"type", "kind", "namespace", "name"}
// for each event to the URL in its configuration,
// {"url": "https://example.com/hook"}. The URL's host must be in the
// manifest's `allowedHosts` and in GRW's `pluginAllowedHosts`.

import { ConfigError, exportNotifier, Interest } from "./grw-sdk/grw-sdk.js";

export const plugin = {
  init(config) {
    this.url = config.string("url", { required: true });
    if (!/^https?:\/\//.test(this.url)) {
      throw new ConfigError(`config key \`url\`: expected an http:// or https:// URL, got ${JSON.stringify(this.url)}`);
    }
    return new Interest();
  },

  deliver(event, http) {
    // 2xx is delivered; 408, 429, 5xx and failures to connect throw Retry;
    // any other answer throws GiveUp.
    http.postJson(this.url, { type: event.type, kind: event.kind, namespace: event.namespace, name: event.name });
  },
};

export const notifier = exportNotifier(plugin);
