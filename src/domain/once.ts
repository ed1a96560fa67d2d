/** `action` made safe to call any number of times: it runs the first time only (a release, the end of a hold). */
export function once(action: () => void): () => void {
  let pending = true;
  return () => {
    if (!pending) return;
    pending = false;
    action();
  };
}
