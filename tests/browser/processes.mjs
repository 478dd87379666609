// Child processes for the Explorer's browser test and benchmark: kilnd and kiln-explorer started
// on port 0, each resolved once it prints the line that says where it listens.
import {spawn} from 'node:child_process';
import readline from 'node:readline';

// Starts `binary` with `argv`, adds it to `children`, and resolves with {child, match} for the
// first stdout line matching `pattern`; rejects when it exits first or `deadlineMs` passes.
export function startProcess(binary, argv, pattern, children, deadlineMs) {
  const child = spawn(binary, argv, {stdio: ['ignore', 'pipe', 'pipe']});
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${binary} did not start: ${stderr}`)), deadlineMs);
    child.on('exit', (code) => reject(new Error(`${binary} exited (${code}): ${stderr}`)));
    readline.createInterface({input: child.stdout}).on('line', (line) => {
      const match = line.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve({child, match});
      }
    });
  });
}
