// js-chat-notifier: posts a short, readable line about each change to a
// Slack or Mattermost incoming webhook, as `chat-notifier` does:
//
//     *Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added
//     *Pod* `default/x` added
//     *ConfigMap* `a/b` deleted
//
// Configuration:
//
//     {"url": "https://hooks.slack.com/services/T000/B000/XXXX", "channel": "#ops",
//      "username": "grw", "iconEmoji": ":eyes:"}
//
// - `url` (string, required): the incoming webhook's http:// or https:// URL.
//   Its host must be in the manifest's `allowedHosts` and in GRW's
//   `pluginAllowedHosts`.
// - `channel`, `username`, `iconEmoji` (strings, optional): sent as
//   `channel`, `username` and `icon_emoji`.
// - `ignore` (list of field paths): fields whose changes are not listed,
//   dotted or JSON pointers; a path covers everything under it. Default:
//   `metadata.resourceVersion`, `metadata.managedFields`,
//   `metadata.generation`, `status`, and the
//   `kubectl.kubernetes.io/last-applied-configuration` annotation.
// - `maxFields` (integer >= 1, default 5): changed fields listed per
//   message; the rest are counted ("and 3 more").
//
// A modification lists the changed leaf fields, the object's own fields
// before its metadata; one that touches ignored fields only sends nothing.
// Values longer than 40 characters are cut. 2xx is delivered; 429, 408, 5xx
// and failures to connect are retried; any other answer is given up.

import { exportNotifier, FieldPath } from "../../sdk/js/grw-sdk.js";

const DEFAULT_IGNORE = [
  "metadata.resourceVersion",
  "metadata.managedFields",
  "metadata.generation",
  "status",
  "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
];

/** Longest value shown, in characters. */
const MAX_VALUE_CHARS = 40;

export const chatNotifier = {
  init(config) {
    this.url = config.string("url", { required: true });
    this.channel = config.string("channel");
    this.username = config.string("username");
    this.iconEmoji = config.string("iconEmoji");
    this.ignore = config.fieldPaths("ignore", { default: DEFAULT_IGNORE.map((p) => FieldPath.parse(p)) });
    this.maxFields = config.int("maxFields", { default: 5, minimum: 1 });
    if (!this.url.startsWith("https://") && !this.url.startsWith("http://")) {
      throw new Error(`config key \`url\`: expected the webhook's http:// or https:// URL, got ${JSON.stringify(this.url)}`);
    }
  },

  deliver(event, http) {
    const text = this.summary(event);
    if (text === undefined) return;
    const message = { text };
    if (this.channel !== undefined) message.channel = this.channel;
    if (this.username !== undefined) message.username = this.username;
    if (this.iconEmoji !== undefined) message.icon_emoji = this.iconEmoji;
    http.postJson(this.url, message);
  },

  /** The message text for `event`, or undefined when it modifies ignored fields only. */
  summary(event) {
    const name = event.namespace === "" ? event.name : `${event.namespace}/${event.name}`;
    const subject = `*${event.kind}* \`${name}\``;
    let text;
    if (event.type === "ADDED") {
      text = `${subject} added`;
    } else if (event.type === "DELETED") {
      text = `${subject} deleted`;
    } else {
      const states = bothStates(event);
      if (states === undefined) {
        // Without both states there is nothing to compare.
        text = `${subject} modified`;
      } else {
        const changes = this.changes(states.old, states.new);
        if (changes.length === 0) return undefined;
        text = `${subject} modified: ${changes.slice(0, this.maxFields).map(describeChange).join("; ")}`;
        if (changes.length > this.maxFields) text += `; and ${changes.length - this.maxFields} more`;
      }
    }
    return escape(text);
  },

  /** The leaf fields that differ between two states, outside the ignored paths. */
  changes(oldValue, newValue) {
    const changes = [];
    const diff = (path, old, now) => {
      if (this.ignore.some((ignored) => ignored.covers(path))) return;
      if (isObject(old) && isObject(now)) {
        const keys = [...new Set([...Object.keys(old), ...Object.keys(now)])].sort(byCodePoint);
        // What the object is about first, its metadata after.
        if (path.length === 0) keys.sort((a, b) => (a === "metadata") - (b === "metadata"));
        for (const key of keys) diff([...path, key], member(old, key), member(now, key));
      } else if (Array.isArray(old) && Array.isArray(now)) {
        for (let i = 0; i < Math.max(old.length, now.length); i++) diff([...path, String(i)], old[i], now[i]);
      } else if (old !== now) {
        // Two objects or two lists were compared above: what is left are
        // scalars, missing values and values of different shapes.
        changes.push({ path: path.join("."), old, new: now });
      }
    };
    diff([], oldValue, newValue);
    return changes;
  },
};

function bothStates(event) {
  if (!event.hasOldObject) return undefined;
  try {
    return { new: event.object, old: event.oldObject };
  } catch {
    return undefined;
  }
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function member(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}

function byCodePoint(a, b) {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const d = left[i].codePointAt(0) - right[i].codePointAt(0);
    if (d !== 0) return d;
  }
  return left.length - right.length;
}

function describeChange(change) {
  if (change.old === undefined) return `${change.path} added`;
  if (change.new === undefined) return `${change.path} removed`;
  return `${change.path} ${short(change.old)} → ${short(change.new)}`;
}

/** A value as a person reads it: strings bare, the rest as compact JSON, cut at MAX_VALUE_CHARS. */
function short(value) {
  const text = typeof value === "string" && value !== "" ? value : JSON.stringify(value);
  const chars = [...text];
  return chars.length > MAX_VALUE_CHARS ? `${chars.slice(0, MAX_VALUE_CHARS - 1).join("")}…` : text;
}

/** Slack's control characters in message text. */
function escape(text) {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

export const notifier = exportNotifier(chatNotifier);
