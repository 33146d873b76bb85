// Reads through GRW with the official Kubernetes JavaScript client, as an
// application would: a list with a label selector, a typed 404, and an
// informer (list, then watch) that must see the Pod the test creates once
// this prints "watching". Each step prints one JSON line: the test checks
// them against the API server's objects.
//
// Usage: node reads.mjs KUBECONFIG NAMESPACE

import * as k8s from '@kubernetes/client-node';

const [kubeconfig, namespace] = process.argv.slice(2);
const say = (step, fields = {}) => console.log(JSON.stringify({ step, ...fields }));

const config = new k8s.KubeConfig();
config.loadFromFile(kubeconfig);
const core = config.makeApiClient(k8s.CoreV1Api);

const pods = await core.listNamespacedPod({
  namespace,
  labelSelector: 'app.kubernetes.io/name=frontend',
});
say('list', {
  names: pods.items.map((p) => p.metadata.name).sort(),
  resourceVersion: pods.metadata.resourceVersion,
});

try {
  await core.readNamespacedPod({ name: 'no-such-pod', namespace });
  say('missing', { status: 200 });
} catch (error) {
  say('missing', { status: error.code, reason: JSON.parse(error.body).reason });
}

const informer = k8s.makeInformer(config, `/api/v1/namespaces/${namespace}/pods`, () =>
  core.listNamespacedPod({ namespace }),
);
const seen = new Promise((resolve) =>
  informer.on('add', (pod) => {
    if (pod.metadata.name === 'late') resolve(pod.metadata.name);
  }),
);
await informer.start();
say('watching', { cached: informer.list().length });
const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 60_000));
const name = await Promise.race([seen, timeout]);
say('watched', { name });
await informer.stop();
process.exit(0);
