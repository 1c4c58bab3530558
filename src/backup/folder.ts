// Snapshots in a folder (SVC_BACKUP_TO=/backups/svc): another disk, a mounted share. Each is copied in under
// a hidden temporary name, synced, then renamed: a crash leaves a hidden file, never half a snapshot
// under a snapshot's name.
import { constants } from "node:fs";
import { copyFile, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { PRIVATE_FILE } from "../db/sqlite/file.ts";
import { NoSuchSnapshot, type Destination } from "./destination.ts";
import { byAge, parseSnapshotName, type SnapshotInfo } from "./names.ts";

export function folderDestination(folder: string): Destination {
  return {
    shown: folder,
    async list() {
      let names: string[];
      try {
        names = await readdir(folder);
      } catch (error) {
        // Not made yet: the first snapshot makes it.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
      const snapshots: SnapshotInfo[] = [];
      for (const name of names) {
        const parsed = parseSnapshotName(name);
        if (!parsed) continue;
        const info = await stat(join(folder, name)).catch(() => null);
        if (info?.isFile()) snapshots.push({ name, size: info.size, ...parsed });
      }
      return snapshots.sort(byAge);
    },
    async put(name, path) {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const partial = join(folder, `.${name}.partial-${crypto.randomUUID().slice(0, 8)}`);
      try {
        await copyFile(path, partial, constants.COPYFILE_EXCL);
        const file = await open(partial, "r+");
        try {
          await file.chmod(PRIVATE_FILE);
          await file.sync();
        } finally {
          await file.close();
        }
        await rename(partial, join(folder, name));
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
    },
    async read(name) {
      const file = Bun.file(join(folder, name));
      if (!parseSnapshotName(name) || !(await file.exists()))
        throw new NoSuchSnapshot(`no snapshot named ${name} in ${folder}`);
      return file.stream();
    },
    async remove(name) {
      await rm(join(folder, name), { force: true });
    },
  };
}
