import Docker from 'dockerode';

/** Removes every swarm service, container, image and network labelled with a test file's deploy scope (what a run left behind). */
export async function removeScopedDockerObjects(docker: Docker, scope: string): Promise<void> {
  const filters = { label: [`opsflow.scope=${scope}`] };
  // First the swarm's services (the swarm driver): otherwise the swarm would start their tasks again.
  const swarm = await docker.info().then(
    (info) => info.Swarm?.ControlAvailable === true,
    () => false,
  );
  if (swarm) {
    for (const service of await docker.listServices({ filters }))
      await docker
        .getService(service.ID!)
        .remove()
        .catch(() => undefined);
    for (let waited = 0; waited < 20 && (await docker.listContainers({ all: true, filters })).length > 0; waited++)
      await new Promise((resolve) => setTimeout(resolve, 250));
  }
  for (const container of await docker.listContainers({ all: true, filters })) {
    await docker
      .getContainer(container.Id)
      .remove({ force: true })
      .catch(() => undefined);
  }
  for (const image of await docker.listImages({ filters })) {
    await docker
      .getImage(image.Id)
      .remove({ force: true })
      .catch(() => undefined);
  }
  // A network with a container still on it (the swarm's edge door joins every service's overlay) is not
  // removed: runs left dozens behind, each one more overlay the door and the swarm carry. Off first, then gone.
  for (const network of await docker.listNetworks({ filters })) {
    const handle = docker.getNetwork(network.Id);
    const attached = ((await handle.inspect().catch(() => null)) as { Containers?: Record<string, unknown> } | null)?.Containers ?? {};
    for (const container of Object.keys(attached)) await handle.disconnect({ Container: container, Force: true }).catch(() => undefined);
    // A disconnect takes a moment to reach the swarm: the removal is tried again for up to 2 s.
    for (let attempt = 0; attempt < 10; attempt++) {
      const removed = await handle.remove().then(
        () => true,
        (error: { statusCode?: number }) => error.statusCode === 404,
      );
      if (removed) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
