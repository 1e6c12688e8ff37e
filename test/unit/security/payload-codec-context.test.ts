import { defaultPayloadConverter } from '@temporalio/common';
import type { SerializationContext } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  AesGcmPayloadCodec,
  encryptionWorkflowIdMetadataKey,
  payloadWorkflowId,
} from '../../../src/security/aes-gcm-payload-codec.js';

const codec = new AesGcmPayloadCodec({ keys: { k1: Buffer.alloc(32, 7).toString('base64') } });
const workflowOf = (workflowId: string): SerializationContext => ({
  type: 'workflow',
  namespace: 'default',
  workflowId,
});
const decision = defaultPayloadConverter.toPayload({ toolCallId: 'call_1_0', reason: "globex's reason" });

describe('a payload decoded for a workflow', () => {
  it('is refused when it names another workflow: copied from one run into another run, it stays unread', async () => {
    const [ofGlobex] = await codec.encode([decision], workflowOf('globex~payroll'));
    const refused = codec.decode([ofGlobex!], workflowOf('acme~mine'));
    await expect(refused).rejects.toMatchObject({ code: 'decryption_failed' });
    await expect(refused).rejects.toThrow("of workflow 'globex~payroll' was sent to workflow 'acme~mine'");
  });

  it('is read by its own workflow, by an activity of that workflow, and where no context is given', async () => {
    const [own] = await codec.encode([decision], workflowOf('acme~mine'));
    const activity: SerializationContext = {
      type: 'activity',
      namespace: 'default',
      workflowId: 'acme~mine',
      activityId: '1',
      isLocal: false,
    };
    for (const context of [workflowOf('acme~mine'), activity, undefined]) {
      const [decoded] = await codec.decode([own!], context);
      expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({
        toolCallId: 'call_1_0',
        reason: "globex's reason",
      });
    }
  });

  it('names no workflow when encoded without a context (the Temporal UI), and is then read anywhere', async () => {
    const [unnamed] = await codec.encode([decision]);
    const [decoded] = await codec.decode([unnamed!], workflowOf('acme~mine'));
    expect(defaultPayloadConverter.fromPayload(decoded!)).toMatchObject({ toolCallId: 'call_1_0' });
  });

  it('is refused when it names an empty workflow id, which would bind it to nothing', async () => {
    const [unnamed] = await codec.encode([decision]);
    const emptied = {
      ...unnamed!,
      metadata: { ...unnamed!.metadata, [encryptionWorkflowIdMetadataKey]: new Uint8Array() },
    };
    for (const context of [workflowOf('acme~mine'), undefined]) {
      await expect(codec.decode([emptied], context)).rejects.toMatchObject({ code: 'decryption_failed' });
    }
    expect(payloadWorkflowId(emptied)).toBeUndefined();
  });
});
