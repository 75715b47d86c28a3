# signature: conv2d(f32[4], f32[4], f32[4])
# signature: conv2d(f64[4], f64[4], f64[4])
# signature: conv2d(f32[4:s], f32[4], f32[4])
import asc


@asc.kernel
def conv2d(input, weight, output):
    batch, in_channels, in_height, in_width = input.shape
    out_channels, in_channels, kernel_height, kernel_width = weight.shape
    out_height = in_height - kernel_height + 1
    out_width = in_width - kernel_width + 1
    for b in range(batch):
        for oc in range(out_channels):
            for oh in range(out_height):
                for ow in range(out_width):
                    sum = 0.0
                    for ic in range(in_channels):
                        for kh in range(kernel_height):
                            for kw in range(kernel_width):
                                sum += input[b, ic, oh + kh, ow + kw] * weight[oc, ic, kh, kw]
                    output[b, oc, oh, ow] = sum
