import { readFileSync } from 'node:fs';

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** Looks a user up in /etc/passwd (enough for the `postgres` user that PostgreSQL needs). */
export function lookupSystemUser(name: string, passwdFile = '/etc/passwd'): SystemUser | null {
  let text: string;
  try {
    text = readFileSync(passwdFile, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) {
      return { name, uid: Number(uid), gid: Number(gid) };
    }
  }
  return null;
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}
