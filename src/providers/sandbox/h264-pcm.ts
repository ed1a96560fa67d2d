/**
 * A minimal H.264 (Constrained Baseline) bitstream that needs no encoder: key frames whose macroblocks are all
 * I_PCM (raw samples), and in-between frames that skip every macroblock (a repeat of the last key frame).
 * Any decoder plays it; the sandbox uses it to make real, tiny, deterministic videos.
 */

class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private used = 0;

  bits(count: number, value: number): this {
    for (let bit = count - 1; bit >= 0; bit -= 1) {
      this.current = (this.current << 1) | ((value >>> bit) & 1);
      this.used += 1;
      if (this.used === 8) {
        this.bytes.push(this.current);
        this.current = 0;
        this.used = 0;
      }
    }
    return this;
  }

  /** Unsigned Exp-Golomb. */
  ue(value: number): this {
    const code = value + 1;
    const length = 32 - Math.clz32(code);
    return this.bits(length - 1, 0).bits(length, code);
  }

  /** Signed Exp-Golomb. */
  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  alignWithZeros(): this {
    while (this.used !== 0) this.bits(1, 0);
    return this;
  }

  raw(values: Uint8Array): this {
    if (this.used !== 0) throw new Error('raw bytes need a byte-aligned writer');
    for (const value of values) this.bytes.push(value);
    return this;
  }

  /** rbsp_trailing_bits: a stop bit, then zeros to the byte boundary. */
  finish(): Buffer {
    this.bits(1, 1).alignWithZeros();
    return Buffer.from(this.bytes);
  }
}

/** A NAL unit: its header byte, then the payload with emulation-prevention bytes inserted. */
function nalUnit(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

export const profileIdc = 66;
export const constraintFlags = 0xc0;
export const levelIdc = 30;
/** log2(MaxFrameNum): frame_num counts 0..15, so a key frame comes at least every 16 frames. */
const log2MaxFrameNum = 4;
export const maxFramesPerKey = 1 << log2MaxFrameNum;

export interface PictureSize {
  width: number;
  height: number;
}

const macroblocks = (size: PictureSize) => ({ across: Math.ceil(size.width / 16), down: Math.ceil(size.height / 16) });

export function sequenceParameterSet(size: PictureSize): Buffer {
  const { across, down } = macroblocks(size);
  const cropRight = (across * 16 - size.width) / 2;
  const cropBottom = (down * 16 - size.height) / 2;
  const writer = new BitWriter()
    .bits(8, profileIdc)
    .bits(8, constraintFlags)
    .bits(8, levelIdc)
    .ue(0) // seq_parameter_set_id
    .ue(log2MaxFrameNum - 4)
    .ue(2) // pic_order_cnt_type 2: output order is decoding order
    .ue(1) // max_num_ref_frames
    .bits(1, 0) // gaps_in_frame_num_value_allowed_flag
    .ue(across - 1)
    .ue(down - 1)
    .bits(1, 1) // frame_mbs_only_flag
    .bits(1, 1); // direct_8x8_inference_flag
  if (cropRight > 0 || cropBottom > 0) writer.bits(1, 1).ue(0).ue(cropRight).ue(0).ue(cropBottom);
  else writer.bits(1, 0);
  writer.bits(1, 0); // vui_parameters_present_flag
  return nalUnit(3, 7, writer.finish());
}

export function pictureParameterSet(): Buffer {
  const writer = new BitWriter()
    .ue(0) // pic_parameter_set_id
    .ue(0) // seq_parameter_set_id
    .bits(1, 0) // entropy_coding_mode_flag: CAVLC
    .bits(1, 0) // bottom_field_pic_order_in_frame_present_flag
    .ue(0) // num_slice_groups_minus1
    .ue(0) // num_ref_idx_l0_default_active_minus1
    .ue(0) // num_ref_idx_l1_default_active_minus1
    .bits(1, 0) // weighted_pred_flag
    .bits(2, 0) // weighted_bipred_idc
    .se(0) // pic_init_qp_minus26
    .se(0) // pic_init_qs_minus26
    .se(0) // chroma_qp_index_offset
    .bits(1, 1) // deblocking_filter_control_present_flag
    .bits(1, 0) // constrained_intra_pred_flag
    .bits(1, 0); // redundant_pic_cnt_present_flag
  return nalUnit(3, 8, writer.finish());
}

/** The planes of one 4:2:0 picture, sized to whole macroblocks; samples must be 1..255 for old decoders. */
export interface Planes {
  luma: Uint8Array;
  cb: Uint8Array;
  cr: Uint8Array;
}

/** An IDR picture of I_PCM macroblocks. `idrPicId` must differ between consecutive key frames. */
export function keyFrame(size: PictureSize, planes: Planes, idrPicId: number): Buffer {
  const { across, down } = macroblocks(size);
  const writer = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(7) // slice_type: I, as every slice of the picture
    .ue(0) // pic_parameter_set_id
    .bits(log2MaxFrameNum, 0) // frame_num
    .ue(idrPicId)
    .bits(1, 0) // no_output_of_prior_pics_flag
    .bits(1, 0) // long_term_reference_flag
    .se(0) // slice_qp_delta
    .ue(1); // disable_deblocking_filter_idc
  const lumaStride = across * 16;
  const chromaStride = across * 8;
  const block = new Uint8Array(384);
  for (let row = 0; row < down; row += 1) {
    for (let column = 0; column < across; column += 1) {
      writer.ue(25); // mb_type I_PCM
      writer.alignWithZeros();
      for (let y = 0; y < 16; y += 1)
        block.set(
          planes.luma.subarray(
            (row * 16 + y) * lumaStride + column * 16,
            (row * 16 + y) * lumaStride + column * 16 + 16,
          ),
          y * 16,
        );
      for (let y = 0; y < 8; y += 1) {
        block.set(
          planes.cb.subarray((row * 8 + y) * chromaStride + column * 8, (row * 8 + y) * chromaStride + column * 8 + 8),
          256 + y * 8,
        );
        block.set(
          planes.cr.subarray((row * 8 + y) * chromaStride + column * 8, (row * 8 + y) * chromaStride + column * 8 + 8),
          320 + y * 8,
        );
      }
      writer.raw(block);
    }
  }
  return nalUnit(3, 5, writer.finish());
}

/** A P picture that skips every macroblock: the previous picture again. `frameNum` counts from the key frame. */
export function repeatFrame(size: PictureSize, frameNum: number): Buffer {
  const { across, down } = macroblocks(size);
  const writer = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(5) // slice_type: P, as every slice of the picture
    .ue(0) // pic_parameter_set_id
    .bits(log2MaxFrameNum, frameNum % maxFramesPerKey)
    .bits(1, 0) // num_ref_idx_active_override_flag
    .bits(1, 0) // ref_pic_list_modification_flag_l0
    .bits(1, 0) // adaptive_ref_pic_marking_mode_flag
    .se(0) // slice_qp_delta
    .ue(1) // disable_deblocking_filter_idc
    .ue(across * down); // mb_skip_run: all of them
  return nalUnit(2, 1, writer.finish());
}

/** Plane sizes of a picture of `size` (whole macroblocks). */
export function planeSizes(size: PictureSize): { lumaWidth: number; lumaHeight: number } {
  const { across, down } = macroblocks(size);
  return { lumaWidth: across * 16, lumaHeight: down * 16 };
}
