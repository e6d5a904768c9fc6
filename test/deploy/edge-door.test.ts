import Docker from 'dockerode';
import { startEdgeDoorContainer } from '../../scripts/platform/swarm';
import { TEST_BASE_IMAGE } from '../support/slots';
import { waitUntil } from '../support/wait';

/**
 * The swarm edge's door after an engine restart: stopped, and still holding endpoints on overlays whose
 * services were removed meanwhile. A CI run failed here ("Could not attach to network …: not found") and took
 * every swarm test with it. The door must start again, on the overlays that still exist.
 */
const docker = new Docker();
const scope = `opsflow-door-${process.pid}`;
const door = `${scope}-door`;
const kept = `${scope}-kept`;
const gone = `${scope}-gone`;

afterAll(async () => {
  await docker
    .getContainer(door)
    .remove({ force: true })
    .catch(() => undefined);
  for (const network of [kept, gone])
    await docker
      .getNetwork(network)
      .remove()
      .catch(() => undefined);
});

const joinedNetworks = async () => Object.keys((await docker.getContainer(door).inspect()).NetworkSettings.Networks).sort();

test('a stopped door whose overlay was removed starts again, rejoined to the overlays that remain', async () => {
  const swarm = ((await docker.info()) as { Swarm?: { LocalNodeState?: string } }).Swarm?.LocalNodeState;
  if (swarm !== 'active') throw new Error(`this test needs the Docker engine in a swarm (the test platform makes it one); it is ${swarm}`);
  for (const name of [kept, gone]) await docker.createNetwork({ Name: name, Driver: 'overlay', Attachable: true, Labels: { 'opsflow.scope': scope } });
  await startEdgeDoorContainer(docker, { name: door, image: TEST_BASE_IMAGE });
  for (const name of [kept, gone]) await docker.getNetwork(name).connect({ Container: door });
  await docker.getContainer(door).stop({ t: 0 });
  // The swarm lets go of a stopped container's attachment to an overlay a moment later: until then the
  // removal is refused with "network … is in use by task …" (a CI run failed on it), so it is tried again.
  await waitUntil(
    'the overlay removed once the swarm has let go of the stopped door',
    () =>
      docker
        .getNetwork(gone)
        .remove()
        .then(
          () => true,
          (error: Error) => {
            if (/in use by task/.test(error.message)) return false;
            throw error;
          },
        ),
    { timeoutMs: 30000, intervalMs: 500 },
  );
  await expect(docker.getContainer(door).start()).rejects.toThrow(/not found/); // what the engine does to a plain start

  await startEdgeDoorContainer(docker, { name: door, image: TEST_BASE_IMAGE });

  const details = await docker.getContainer(door).inspect();
  expect(details.State.Running).toBe(true);
  expect(await joinedNetworks()).toEqual(['bridge', kept]);
});
