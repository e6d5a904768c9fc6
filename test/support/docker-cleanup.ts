import Docker from 'dockerode';

/** Removes every container, image and network labelled with a test file's deploy scope (what a run left behind). */
export async function removeScopedDockerObjects(docker: Docker, scope: string): Promise<void> {
  const filters = { label: [`opsflow.scope=${scope}`] };
  for (const container of await docker.listContainers({ all: true, filters })) {
    await docker.getContainer(container.Id).remove({ force: true }).catch(() => undefined);
  }
  for (const image of await docker.listImages({ filters })) {
    await docker.getImage(image.Id).remove({ force: true }).catch(() => undefined);
  }
  for (const network of await docker.listNetworks({ filters })) {
    await docker.getNetwork(network.Id).remove().catch(() => undefined);
  }
}
