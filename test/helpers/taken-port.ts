import { createServer, type Server } from 'node:net';

/** Runs `fn` with the address of a port another program holds meanwhile. */
export async function withTakenPort(fn: (addr: string) => Promise<void>): Promise<void> {
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as { port: number };
  try {
    await fn(`127.0.0.1:${port}`);
  } finally {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
}

/** A port nothing listens on now: bound, then released (to refuse connections, or to bind again later). */
export async function freePort(): Promise<number> {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
