import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** Sends one inline Redis command over a raw socket and resolves the first reply line. */
export function redisCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (reply.includes('\r\n')) {
        socket.end();
        resolve(reply);
      }
    });
    socket.on('error', reject);
  });
}

/** Opens a TCP connection and resolves it once connected. */
export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves when the peer closes the connection (the server process died). */
export function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.on('error', () => {});
    socket.once('close', () => resolve());
  });
}

/** True while a process with this pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return true;
}

/** The state letter of /proc/<pid>/stat (R, S, T for stopped, Z for a zombie), or null when gone. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}
