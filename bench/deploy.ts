/**
 * `npx tsx bench/deploy.ts [--deploys 3] [--requests 5000] [--concurrency 16] [--rounds 3] [--seconds 5] [--edge-concurrency 1] [--driver swarm] [--tls-only]`:
 * deploys small JARs (the base image present), each a service of its own, through the edge as production
 * runs it (the API as its own process behind Envoy) and prints the seconds from each upload to the first 200
 * through the edge, alternated with the baseline of a shell script run before, between and after them
 * (bench/deploy-baseline.sh), and the ratio of the medians. With
 * `--driver swarm` it then deploys another under the swarm driver (a worker of its own, the registry and the
 * swarm of the test platform) and prints its seconds beside the docker driver's first, with each worker's peak memory. Then four paths to the same
 * container, in alternating rounds so that a machine getting faster or slower during the run weighs on
 * all: direct, Envoy (the edge), a bare undici proxy (bench/bare-node-proxy.ts), the Node peer, and a bare
 * Envoy (bench/bare-envoy.ts: the same binary proxying and nothing else), the floor beneath the edge. Each
 * is loaded by the Node client (a new connection per request, and kept-alive connections) and by `wrk`
 * (1 thread, 16 connections, `--seconds` a run, kept alive or `Connection: close`); printed are each proxy's median ratio to
 * direct, p50 and p99, CPU time per request, and peak memory. Then the table "edge TLS vs plain HTTP"
 * (bench/tls.ts, #64): the first service given a hostname and a self-signed certificate, loaded through the
 * edge over HTTPS by hostname and over plain HTTP by its path, in alternating rounds: kept-alive throughput
 * and p99 (wrk), new connections per request (wrk, and the Node client with a full handshake each), Envoy's
 * CPU per request and peak memory. The ratios against the goals come last. `--tls-only` deploys the one
 * service and prints the TLS table alone (a short run: `--tls-only --requests 300 --rounds 1 --seconds 1`).
 */
// First: with --tracing, the SDK patches `pg` and `http` as they load.
import { tracingLine } from './tracing';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { createDocker } from '../adapters/docker';
import { buildJar, postJar } from '../test/deploy/jars';
import { removeScopedDockerObjects } from '../test/support/docker-cleanup';
import { typescriptCommand } from '../scripts/platform/children';
import { freePort } from '../test/support/slots';
import { peakMemoryMb, ROOT, startBenchPlatform, runBench } from './support';
import { RunningEdgePlatform, startApiBehindEdge } from './edge-platform';
import path from 'node:path';
import { ensureBaseImage } from '../adapters/deploy/jre-base-image';
import { edgeVersionCounters } from '../edge/admin';
import { RunningBareEnvoy, startBareEnvoy } from './bare-envoy';
import { cpuMicros, get, line, load, Load, median, wrk, wrkDuring } from './load';
import { measureEdgeTls } from './tls';
import { deployStages } from './deploy-stages';

const SCOPE = 'opsflow-bench';

const CLIENTS = [
  { name: 'a new connection per request', agent: new http.Agent({ keepAlive: false }) },
  { name: 'kept-alive connections', agent: new http.Agent({ keepAlive: true }) },
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tracing: { type: 'boolean', default: false },
      requests: { type: 'string', default: '5000' },
      concurrency: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '3' },
      deploys: { type: 'string', default: '3' },
      'edge-concurrency': { type: 'string', default: '1' },
      driver: { type: 'string', default: 'docker' },
      seconds: { type: 'string', default: '5' },
      'tls-only': { type: 'boolean', default: false },
    },
  });
  // Checked first: without it the bench would fail only after the deploy, minutes in.
  if (spawnSync('wrk', ['--version']).error) throw new Error("bench/deploy needs wrk, Debian's HTTP load generator: apt-get install wrk");
  if (spawnSync('openssl', ['version']).error) throw new Error('bench/deploy needs openssl, for the certificate of its TLS figures: apt-get install openssl');
  const requests = Number(values.requests);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);
  const deploys = Number(values.deploys);
  const seconds = Number(values.seconds);
  if (!Number.isInteger(deploys) || deploys < 1) throw new Error('--deploys is a whole number of at least 1');
  console.log(
    `bench/deploy: a small JAR on opsflow/jre:17, then ${rounds} rounds of ${requests} requests ${concurrency} at a time per client (${os.cpus().length} cores); Envoy --concurrency ${values['edge-concurrency']}`,
  );
  console.log(tracingLine());
  // The base image built before any timing starts, from Debian packages when missing (as npm start does).
  const platform = await startBenchPlatform({
    DEPLOY_BASE_IMAGE: 'opsflow/jre:17',
    DEPLOY_BASE_IMAGE_BUILD: 'debian',
    DEPLOY_SCOPE: SCOPE,
    DEPLOY_NETWORK: 'opsflow-bench',
  });
  await ensureBaseImage({
    docker: createDocker({ dockerHost: platform.config.dockerHost }).docker,
    image: 'opsflow/jre:17',
    dockerHost: platform.config.dockerHost,
    say: (line) => console.log(line),
  });
  const docker = createDocker({ dockerHost: platform.config.dockerHost });
  let nodeProxy: ChildProcess | null = null;
  let bareEnvoy: RunningBareEnvoy | null = null;
  let edge: RunningEdgePlatform | null = null;
  try {
    await removeScopedDockerObjects(docker.docker, SCOPE);
    const dockerWorker = await platform.startWorker(['deployments']);
    const admin = await signToken({ secret: platform.config.identity.jwtSecret, claims: { sub: 'bench-admin', roles: ['ADMIN'] } });
    const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=bench-service\n' } });

    // The edge as production runs it: the API as its own process behind Envoy, writing Envoy's files.
    edge = await startApiBehindEdge(platform, { edgeConcurrency: Number(values['edge-concurrency']) });
    const { edgeUrl } = edge;
    const auth = { authorization: `Bearer ${admin}` };

    /**
     * Seconds from the upload of `jarFile` to the first 200 through the edge at `/api/{slug}/x`; prints the
     * deploy's stages as its workflow history records them, in seconds from the upload.
     */
    const untilFirst200 = async (jarFile: string, slug: string) => {
      const uploaded = performance.now();
      const uploadedAt = Date.now();
      const accepted = await postJar({ apiUrl: edgeUrl, token: admin, jar: jarFile });
      if (accepted.status !== 202) throw new Error(`deploy refused: ${JSON.stringify(accepted.body)}`);
      const acceptedAfter = (performance.now() - uploaded) / 1000;
      for (;;) {
        const answer = await fetch(`${edgeUrl}/api/${slug}/x`, { headers: auth }).catch(() => null);
        if (answer?.status === 200) break;
        await answer?.arrayBuffer();
        if (performance.now() - uploaded > 120000) throw new Error(`no 200 from ${slug} through the edge within two minutes`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const seconds = (performance.now() - uploaded) / 1000;
      const { workflowId } = accepted.body as { workflowId: string };
      // The run's last steps (the deployment's finish, the images' prune) end before anything else is timed.
      await platform.temporal.client.workflow.getHandle(workflowId).result();
      const stages = [`202 at ${acceptedAfter.toFixed(2)}`, ...(await deployStages(platform.temporal.client, workflowId, uploadedAt))];
      console.log(
        `  ${slug}'s stages (s from the upload; an activity from its scheduling to its completion): ${stages.join(', ')}; first 200 at ${seconds.toFixed(2)}`,
      );
      return seconds;
    };
    /**
     * The baseline, bench/deploy-baseline.sh: seconds for a shell script to build the same kind of image from
     * another JAR of the same size (so no build cache is shared), run it, and get its first 200.
     */
    const shellScript = async (round: number) => {
      const baselineJar = await buildJar({
        mainClass: 'HelloServer',
        entries: { 'application.properties': `spring.application.name=bench-baseline-${round}\n` },
      });
      const started = performance.now();
      const ran = spawnSync('sh', [path.join(ROOT, 'bench', 'deploy-baseline.sh'), baselineJar, 'opsflow/jre:17', `${SCOPE}-baseline-${round}`, SCOPE], {
        encoding: 'utf8',
        timeout: 120000,
      });
      if (ran.status !== 0) throw new Error(`the baseline script failed: ${ran.stderr || ran.error}`);
      const seconds = (performance.now() - started) / 1000;
      // Not left idling beside what is measured next.
      await docker.docker.getContainer(`${SCOPE}-baseline-${round}`).remove({ force: true });
      return seconds;
    };
    // Script, deploy, script, …, script: a machine getting faster or slower during the run weighs on both.
    // The first deploy is the first of a worker and an API just started; the later ones, each of a service of
    // its own, find them as a platform that has been up does. The ratio is of the medians.
    // #64: the edge's HTTPS beside its plain HTTP, on the first service (bench/tls.ts).
    const { edgePid, tlsPort, adminUrl } = edge;
    const edgeTls = () =>
      measureEdgeTls({
        edgeUrl,
        tlsPort,
        adminUrl,
        edgePid,
        token: admin,
        service: { name: 'bench-service', slug: 'bench' },
        path: '/x',
        rounds,
        requests,
        concurrency,
        seconds,
      });
    if (values['tls-only']) {
      // The TLS figures alone, for a short run: the one service they load, none of the figures before them.
      await untilFirst200(jar, 'bench');
      console.log(`  ratios: ${await edgeTls()}`);
      return;
    }
    const baselineRuns = [await shellScript(1)];
    const deployRuns: number[] = [];
    for (let n = 1; n <= deploys; n++) {
      const name = n === 1 ? 'bench' : `bench-${n}`;
      const deployJar =
        n === 1 ? jar : await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': `spring.application.name=${name}-service\n` } });
      deployRuns.push(await untilFirst200(deployJar, name));
      baselineRuns.push(await shellScript(n + 1));
    }
    const dockerSeconds = median(deployRuns);
    const baselineSeconds = median(baselineRuns);
    console.log(
      `  baseline (bench/deploy-baseline.sh: docker build, docker run, curl until 200): ${baselineRuns.map((s) => s.toFixed(2)).join(', ')} s; median ${baselineSeconds.toFixed(2)} s`,
    );
    console.log(
      `  upload to first 200 through the edge: ${deployRuns.map((s) => s.toFixed(2)).join(', ')} s (the first on a worker and an API just started); median ${dockerSeconds.toFixed(2)} s (docker driver; its worker's peak memory ${peakMemoryMb(dockerWorker.pid!).toFixed(0)} MiB)`,
    );
    // Only the first service serves the rest of the bench.
    for (let n = 2; n <= deploys; n++) {
      const undeploy = await fetch(`${edgeUrl}/api/infra/services/bench-${n}-service`, { method: 'DELETE', headers: auth });
      if (undeploy.status !== 202) throw new Error(`the undeploy of bench-${n}-service was refused: ${await undeploy.text()}`);
      const { workflowId } = (await undeploy.json()) as { workflowId: string };
      await platform.temporal.client.workflow.getHandle(workflowId).result();
    }
    const summary: string[] = [`deploy ${(dockerSeconds / baselineSeconds).toFixed(2)}x the baseline script (goal <= 1.3x)`];

    // Steady wrk traffic through the edge across a redeploy, a rollback, a canary promote and a canary
    // revert: every answer that is not 2xx counts, except the 500s the bad version itself gave during its
    // canary step (counted by Envoy on the canary's cluster, and printed apart). The deploys judge their
    // canaries on the edge's statistics: this worker reads the edge's admin, as the deployments worker does in production.
    dockerWorker.kill('SIGTERM');
    await new Promise((resolve) => dockerWorker.once('exit', resolve));
    const edgeAdminUrl = edge.adminUrl;
    const loadWorker = await platform.startWorker(['deployments'], { EDGE_ADMIN_URL: edgeAdminUrl });
    type Accepted = { status: number; body: { workflowId: string; runId: string; deploymentId: string } };
    const closed = async (accepted: Accepted) => {
      if (accepted.status !== 202) throw new Error(`refused: ${JSON.stringify(accepted.body)}`);
      await platform.temporal.client.workflow.getHandle(accepted.body.workflowId, accepted.body.runId).result();
      return (await (await fetch(`${edgeUrl}/api/infra/deployments/${accepted.body.deploymentId}`, { headers: auth })).json()) as { status: string };
    };
    const versionJar = (version: string) =>
      buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=bench-service\n', 'version.txt': version } });
    const canary = { steps: [10, 50, 100], pauseSeconds: 3, maxErrorRate: 0.02, minRequests: 20 };
    const cases: Array<{ name: string; expected: string; run: () => Promise<Accepted> }> = [
      {
        name: 'redeploy',
        expected: 'RUNNING',
        run: async () => (await postJar({ apiUrl: edgeUrl, token: admin, jar: await versionJar('2'), fields: { redeploy: 'true' } })) as Accepted,
      },
      {
        name: 'rollback',
        expected: 'RUNNING',
        run: async () => {
          const answer = await fetch(`${edgeUrl}/api/infra/services/bench-service/rollback`, { method: 'POST', headers: auth });
          return { status: answer.status, body: (await answer.json()) as Accepted['body'] };
        },
      },
      {
        name: 'canary promote',
        expected: 'RUNNING',
        run: async () =>
          (await postJar({
            apiUrl: edgeUrl,
            token: admin,
            jar: await versionJar('3'),
            fields: { redeploy: 'true', rollout: JSON.stringify(canary) },
          })) as Accepted,
      },
      {
        name: 'canary revert',
        expected: 'REVERTED',
        run: async () =>
          (await postJar({
            apiUrl: edgeUrl,
            token: admin,
            jar: await versionJar('4'),
            fields: { redeploy: 'true', ENV_FAIL_EVERY: '3', rollout: JSON.stringify(canary) },
          })) as Accepted,
      },
    ];
    const failedRequests: string[] = [];
    for (const operation of cases) {
      const canaryErrorsBefore = (await edgeVersionCounters(edgeAdminUrl, 'bench-service'))?.canary.errors5xx ?? 0;
      const traffic = wrkDuring({ url: `${edgeUrl}/api/bench/x`, headers: auth, connections: 4 });
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const started = performance.now();
      const outcome = await closed(await operation.run());
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const result = await traffic.stop();
      const badVersionOwn = Math.max(0, ((await edgeVersionCounters(edgeAdminUrl, 'bench-service'))?.canary.errors5xx ?? 0) - canaryErrorsBefore);
      const platformFailures = result.non2xx - badVersionOwn + result.socketErrors;
      if (outcome.status !== operation.expected) throw new Error(`the ${operation.name} ended ${outcome.status}, not ${operation.expected}`);
      console.log(
        `  wrk across a ${operation.name} (${((performance.now() - started) / 1000).toFixed(1)} s, ended ${outcome.status}): ${result.answered} answers, ` +
          `${result.non2xx} not 2xx (${badVersionOwn} of them the bad version's own 500s), ${result.socketErrors} socket errors: ${platformFailures} failed by the platform`,
      );
      failedRequests.push(`${operation.name} ${platformFailures}`);
    }
    summary.push(`requests failed by the platform across deploys (goal 0): ${failedRequests.join(', ')}`);
    loadWorker.kill('SIGTERM');
    await new Promise((resolve) => loadWorker.once('exit', resolve));
    if (values.driver === 'swarm') {
      // The same JAR under another name, deployed by a worker of the swarm driver, the docker driver's stopped.
      if ('error' in platform.info.swarm) throw new Error(platform.info.swarm.error);
      const swarmWorker = await platform.startWorker(['deployments'], {
        DEPLOY_DRIVER: 'swarm',
        DEPLOY_REGISTRY: platform.info.swarm.registry,
        DEPLOY_ATTACH_CONTAINERS: platform.info.swarm.door,
      });
      const swarmJar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=bench-swarm-service\n' } });
      const swarmSeconds = await untilFirst200(swarmJar, 'bench-swarm');
      console.log(
        `  upload to first 200 through the edge: ${swarmSeconds.toFixed(1)} s (swarm driver; its worker's peak memory ${peakMemoryMb(swarmWorker.pid!).toFixed(0)} MiB), ${(swarmSeconds / deployRuns[0]).toFixed(2)} × the docker driver's first (each on a worker just started)`,
      );
    }
    const gateway = `${edgeUrl}/api/bench/x`;

    const service = (await (await fetch(`${edgeUrl}/api/infra/services/bench-service`, { headers: auth })).json()) as { instances: Array<{ address: string }> };
    const direct = `http://${service.instances[0].address}/x`;
    // The Node peer, measured in the same run: a bare undici proxy to the same instance.
    const nodePort = await freePort();
    nodeProxy = spawn(...typescriptCommand('bench/bare-node-proxy.ts', [String(nodePort), `http://${service.instances[0].address}`]), {
      cwd: ROOT,
      stdio: 'ignore',
    });
    const nodeUrl = `http://127.0.0.1:${nodePort}/api/bench/x`;
    while ((await fetch(nodeUrl).catch(() => null))?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));

    // The floor beneath the edge, in the same run: the same Envoy proxying to the same instance and nothing else.
    bareEnvoy = await startBareEnvoy({
      port: await freePort(),
      adminPort: await freePort(),
      slug: 'bench',
      instance: service.instances[0].address,
      concurrency: Number(values['edge-concurrency']),
    });

    const paths = [
      { name: 'direct', url: direct, headers: {} as Record<string, string>, pid: null as number | null },
      { name: 'node', url: nodeUrl, headers: auth, pid: nodeProxy.pid! },
      { name: 'bare-envoy', url: bareEnvoy.url, headers: auth, pid: bareEnvoy.pid },
      { name: 'envoy', url: gateway, headers: auth, pid: edge.edgePid },
    ];
    type Path = (typeof paths)[number];
    const proxies = paths.filter((target) => target.pid !== null).map((target) => target.name);
    /**
     * `rounds` rounds of every path in turn, so a machine getting faster or slower weighs on all; each
     * proxy's CPU per request from its process's CPU time over the requests it served.
     */
    const alternate = async <T extends Load>(measure: (target: Path) => Promise<{ load: T; served: number }>) => {
      const results: Record<string, T[]> = Object.fromEntries(paths.map((target) => [target.name, []]));
      const cpu: Record<string, number[]> = Object.fromEntries(proxies.map((proxy) => [proxy, []]));
      for (let round = 1; round <= rounds; round++) {
        for (const target of paths) {
          const before = target.pid ? cpuMicros(target.pid) : 0;
          const { load: result, served } = await measure(target);
          if (target.pid) cpu[target.name].push((cpuMicros(target.pid) - before) / served);
          results[target.name].push(result);
          console.log(line(`${target.name} r${round}`, result));
        }
      }
      const ratio = (proxy: string) => median(results[proxy].map((result, i) => result.perSecond / results.direct[i].perSecond)).toFixed(2);
      return { results, cpu, ratio };
    };
    for (const client of CLIENTS) {
      const run = (url: string, headers: Record<string, string>, count: number) =>
        load({ request: () => get(url, headers, client.agent), requests: count, concurrency });
      // The JVM and the proxies are compiled hot before anything is measured.
      for (const target of paths) await run(target.url, target.headers, 2000);
      console.log(`  client: Node, ${client.name}`);
      const { cpu, ratio } = await alternate(async (target) => ({ load: await run(target.url, target.headers, requests), served: requests }));
      for (const proxy of proxies) {
        console.log(
          `  Node client, ${client.name}, ${proxy}: ${proxy} / direct rate, median of ${rounds} rounds: ${ratio(proxy)}; CPU ${median(cpu[proxy]).toFixed(0)} µs per request`,
        );
      }
    }

    const wrkClients: Array<{ name: string; headers: Record<string, string> }> = [
      { name: 'kept-alive connections', headers: {} },
      { name: 'a new connection per request', headers: { connection: 'close' } },
    ];
    for (const client of wrkClients) {
      console.log(`  wrk, 1 thread, ${concurrency} connections, ${seconds} s a run: ${client.name}`);
      for (const target of paths) wrk({ url: target.url, headers: { ...target.headers, ...client.headers }, seconds: 2, connections: concurrency });
      const { results, cpu, ratio } = await alternate(async (target) => {
        const result = wrk({ url: target.url, headers: { ...target.headers, ...client.headers }, seconds, connections: concurrency });
        return { load: result, served: result.perSecond * seconds };
      });
      for (const proxy of proxies) {
        console.log(
          `  wrk, ${client.name}, ${proxy}: ${proxy} / direct rate, median of ${rounds} rounds: ${ratio(proxy)}; ` +
            `p50 ${median(results[proxy].map((r) => r.p50)).toFixed(2)} ms, p99 ${median(results[proxy].map((r) => r.p99)).toFixed(2)} ms; ` +
            `CPU ${median(cpu[proxy]).toFixed(0)} µs per request`,
        );
      }
      if (client.headers.connection === undefined) {
        // #60: the edge is judged against a bare Envoy measured in the same run.
        const p99 = (proxy: string) => median(results[proxy].map((r) => r.p99));
        summary.push(
          `edge kept-alive (wrk) ${ratio('envoy')} of direct (goal >= 0.30), ` +
            `p99 ${p99('envoy').toFixed(2)} ms, ${(p99('envoy') / p99('bare-envoy')).toFixed(2)}x a bare Envoy's ${p99('bare-envoy').toFixed(2)} ms (goal <= 1.25x), ` +
            `Envoy CPU ${median(cpu.envoy).toFixed(0)} µs per request, ` +
            `${(median(cpu.envoy) / median(cpu['bare-envoy'])).toFixed(2)}x a bare Envoy's ${median(cpu['bare-envoy']).toFixed(0)} µs in the same run (goal <= 1.25x)`,
        );
      }
      console.log(`  direct: p50 ${median(results.direct.map((r) => r.p50)).toFixed(2)} ms, p99 ${median(results.direct.map((r) => r.p99)).toFixed(2)} ms`);
    }
    console.log(
      `  peak memory: bare Node proxy ${peakMemoryMb(nodeProxy.pid!).toFixed(0)} MiB, bare Envoy ${peakMemoryMb(bareEnvoy.pid).toFixed(0)} MiB, envoy ${peakMemoryMb(edge.edgePid).toFixed(0)} MiB`,
    );
    summary.push(await edgeTls());
    console.log(`  ratios: ${summary.join('; ')}`);
  } finally {
    await edge?.stop();
    nodeProxy?.kill('SIGTERM');
    await bareEnvoy?.stop();
    await removeScopedDockerObjects(docker.docker, SCOPE);
    await platform.stop();
  }
}

runBench(main);
