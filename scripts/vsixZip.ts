// Reads a VSIX (a zip file): the names of its entries and one entry's bytes. Enough for the release
// script's checks; a VSIX is far below zip64's sizes, and vsce writes stored or deflated entries only.
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

interface Entry {
  method: number;
  compressedSize: number;
  localHeader: number;
}

export class Vsix {
  readonly path: string;
  private readonly data: Buffer;
  private readonly entries = new Map<string, Entry>();

  constructor(path: string) {
    this.path = path;
    this.data = readFileSync(path);
    const end = this.endOfCentralDirectory();
    let at = this.data.readUInt32LE(end + 16);
    for (let n = this.data.readUInt16LE(end + 10); n > 0; n--) {
      if (this.data.readUInt32LE(at) !== 0x02014b50) throw new Error(`${path}: a damaged zip directory`);
      const nameLength = this.data.readUInt16LE(at + 28);
      const name = this.data.toString('utf8', at + 46, at + 46 + nameLength);
      this.entries.set(name, {
        method: this.data.readUInt16LE(at + 10),
        compressedSize: this.data.readUInt32LE(at + 20),
        localHeader: this.data.readUInt32LE(at + 42),
      });
      at += 46 + nameLength + this.data.readUInt16LE(at + 30) + this.data.readUInt16LE(at + 32);
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  read(name: string): Buffer {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`${this.path} has no ${name}`);
    const at = entry.localHeader;
    const start = at + 30 + this.data.readUInt16LE(at + 26) + this.data.readUInt16LE(at + 28);
    const bytes = this.data.subarray(start, start + entry.compressedSize);
    if (entry.method === 0) return bytes;
    if (entry.method === 8) return inflateRawSync(bytes);
    throw new Error(`${this.path}: ${name} is compressed with method ${entry.method}`);
  }

  /** The end-of-central-directory record: the last one, searched backwards past a comment of at most 64 KB. */
  private endOfCentralDirectory(): number {
    const last = Math.max(0, this.data.length - 22 - 0xffff);
    for (let at = this.data.length - 22; at >= last; at--) if (this.data.readUInt32LE(at) === 0x06054b50) return at;
    throw new Error(`${this.path} is not a zip file`);
  }
}
