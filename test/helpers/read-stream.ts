/** Reads a response body as text until `until` matches what was read, or the stream ends. */
export async function readStreamUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: RegExp): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!until.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return text;
}
