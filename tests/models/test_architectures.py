"""Hugging Face and torchvision architectures through brt.compile_torch.

Each model is built from its config at a small size (its default attention
implementation, sdpa) with seeded random weights (see `randomize`), run on
seeded random inputs (padded token rows among them) by brt and by eager
PyTorch in float32, and each output that matters (logits, last hidden state,
embeddings) must agree within a relative L2 error of 1e-4."""
import numpy as np
import pytest

from conftest import require  # noqa: E402

torch = require("torch")
require("torch_mlir")
transformers = require("transformers")
torchvision = require("torchvision")
import brt  # noqa: E402

MAX_RELATIVE_L2 = 1e-4
VOCAB = 128
BATCH, SEQ = 2, 16


class Outputs(torch.nn.Module):
    """Calls `model` with the positional arguments as the keywords `inputs`
    and returns the outputs named `outputs` (attributes of a Hugging Face
    ModelOutput; "" for a model that returns one tensor)."""

    def __init__(self, model, inputs, outputs):
        super().__init__()
        self.model, self.inputs, self.outputs = model, inputs, outputs

    def forward(self, *args):
        result = self.model(**dict(zip(self.inputs, args)))
        return tuple(getattr(result, name) if name else result for name in self.outputs)


def token_ids(generator, shape=(BATCH, SEQ)):
    return torch.randint(0, VOCAB, shape, generator=generator)


def padding_mask(generator, shape=(BATCH, SEQ)):
    """Ones, then zeros after a random length (at least half the row); the
    first row unpadded."""
    lengths = torch.randint(shape[1] // 2, shape[1] + 1, (shape[0],), generator=generator)
    lengths[0] = shape[1]
    return (torch.arange(shape[1])[None, :] < lengths[:, None]).long()


def images(generator, size, batch=BATCH):
    return torch.randn(batch, 3, size, size, generator=generator)


def randomize(model, generator):
    """Seeded random weights that keep activations near unit size, where the
    configs' own initializations would hide a wrong lowering: their std of
    0.02 makes attention nearly uniform (ignoring BERT's padding mask then
    moves its output by only 1e-3), norms start as the identity, ConvNeXt's
    layer scale as 1e-6, and a fresh batch norm in eval mode is the
    identity. Matrices and kernels: normal with std 1/sqrt(fan_in); 1-D
    weights (norm scales): uniform in [0.5, 1.5); other vectors (biases,
    layer scales): normal with std 0.1."""
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            p.copy_(torch.randn(p.shape, generator=generator) / p[0].numel() ** 0.5)
        elif p.dim() == 1 and name.endswith("weight"):
            p.copy_(torch.rand(p.shape, generator=generator) + 0.5)
        elif p.dim() == 1:
            p.copy_(torch.randn(p.shape, generator=generator) * 0.1)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=generator) + 0.5)


def decoder_lm(config_class, model_class, **extra):
    """A decoder-only causal LM (Llama and its kin) with grouped-query
    attention: logits for padded prompts."""
    config = config_class(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                          use_cache=False, **extra)
    return lambda g: (Outputs(model_class(config), ["input_ids", "attention_mask"], ["logits"]),
                      (token_ids(g), padding_mask(g)))


def bert(g):
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64, max_position_embeddings=64)
    return (Outputs(transformers.BertModel(config), ["input_ids", "attention_mask", "token_type_ids"],
                    ["last_hidden_state", "pooler_output"]),
            (token_ids(g), padding_mask(g), torch.randint(0, 2, (BATCH, SEQ), generator=g)))


def distilbert(g):
    config = transformers.DistilBertConfig(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                           max_position_embeddings=64)
    return (Outputs(transformers.DistilBertModel(config), ["input_ids", "attention_mask"], ["last_hidden_state"]),
            (token_ids(g), padding_mask(g)))


def gpt2(g):
    # Its Conv1D flattens with `x.view(-1, x.size(-1))`, which failed once
    # sdpa was decomposed into its math (see torch_frontend._views_as_reshapes).
    config = transformers.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                     bos_token_id=0, eos_token_id=0, use_cache=False)
    return Outputs(transformers.GPT2LMHeadModel(config), ["input_ids"], ["logits"]), (token_ids(g),)


def t5(g):
    config = transformers.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                                   num_decoder_layers=2, num_heads=4, relative_attention_num_buckets=8,
                                   relative_attention_max_distance=16, decoder_start_token_id=0, use_cache=False)
    return (Outputs(transformers.T5ForConditionalGeneration(config),
                    ["input_ids", "attention_mask", "decoder_input_ids"], ["logits", "encoder_last_hidden_state"]),
            (token_ids(g), padding_mask(g), token_ids(g, (BATCH, SEQ // 2))))


def bart(g):
    config = transformers.BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
                                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                     decoder_ffn_dim=64, max_position_embeddings=64, use_cache=False)
    return (Outputs(transformers.BartForConditionalGeneration(config),
                    ["input_ids", "attention_mask", "decoder_input_ids"], ["logits", "encoder_last_hidden_state"]),
            (token_ids(g), padding_mask(g), token_ids(g, (BATCH, SEQ // 2))))


def whisper(g):
    # The encoder takes exactly 2 * max_source_positions mel frames.
    config = transformers.WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, d_model=32, encoder_layers=2,
                                        decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                                        encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=16,
                                        max_target_positions=32, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                        decoder_start_token_id=1, use_cache=False)
    features = torch.randn(BATCH, 16, 32, generator=g)
    return (Outputs(transformers.WhisperForConditionalGeneration(config), ["input_features", "decoder_input_ids"],
                    ["logits", "encoder_last_hidden_state"]),
            (features, token_ids(g, (BATCH, SEQ // 2))))


def vit(g):
    config = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
                                    num_attention_heads=4, intermediate_size=64)
    return (Outputs(transformers.ViTModel(config), ["pixel_values"], ["last_hidden_state", "pooler_output"]),
            (images(g, 32),))


def swin(g):
    # 14x14 patches in windows of 4: padded windows, shifted in each second block.
    config = transformers.SwinConfig(image_size=56, patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                                     window_size=4)
    return (Outputs(transformers.SwinModel(config), ["pixel_values"], ["last_hidden_state", "pooler_output"]),
            (images(g, 56),))


def convnext(g):
    config = transformers.ConvNextConfig(num_channels=3, patch_size=4, hidden_sizes=[8, 16, 32, 64],
                                         depths=[1, 1, 2, 1], num_labels=10)
    return (Outputs(transformers.ConvNextForImageClassification(config), ["pixel_values"], ["logits"]),
            (images(g, 64),))


def clip(g):
    text = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=SEQ)
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                  patch_size=8)
    config = transformers.CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)
    return (Outputs(transformers.CLIPModel(config), ["input_ids", "attention_mask", "pixel_values"],
                    ["logits_per_image", "text_embeds", "image_embeds"]),
            (token_ids(g), padding_mask(g), images(g, 32)))


def clip_vision(g):
    # The vision tower and its projection alone: CLIPModel's text tower pools
    # with an argmax of int32 token ids, which brt-compile refuses (below).
    config = transformers.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                           num_attention_heads=4, image_size=32, patch_size=8, projection_dim=16)
    return (Outputs(transformers.CLIPVisionModelWithProjection(config), ["pixel_values"],
                    ["image_embeds", "last_hidden_state"]),
            (images(g, 32),))


def torchvision_classifier(name):
    def build(g):
        model = getattr(torchvision.models, name)(weights=None, num_classes=10)
        return Outputs(model, ["x"], [""]), (images(g, 64, batch=1),)
    return build


ARCHITECTURES = {
    "bert": bert,
    "distilbert": distilbert,
    "gpt2": gpt2,
    "llama": decoder_lm(transformers.LlamaConfig, transformers.LlamaForCausalLM),
    "qwen2": decoder_lm(transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
    # A window shorter than the prompt, so that the sliding-window mask cuts.
    "mistral": decoder_lm(transformers.MistralConfig, transformers.MistralForCausalLM, sliding_window=8),
    "t5": t5,
    "bart": bart,
    "whisper": whisper,
    "vit": vit,
    "swin": swin,
    "convnext": convnext,
    "clip": clip,
    "clip_vision": clip_vision,
    "resnet18": torchvision_classifier("resnet18"),
    "mobilenet_v3_small": torchvision_classifier("mobilenet_v3_small"),
}


def relative_l2(got, want):
    return float(np.linalg.norm((got - want).ravel()) / np.linalg.norm(want.ravel()))


# brt-compile gaps (C++), each with the smallest program that shows it.
KNOWN_GAPS = {}


def architectures():
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=brt.CompileError, reason=KNOWN_GAPS[name]))
            if name in KNOWN_GAPS else name for name in ARCHITECTURES]


@pytest.mark.parametrize("name", architectures())
def test_matches_eager_pytorch(name, tmp_path):
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        model, args = ARCHITECTURES[name](generator)
        randomize(model, generator)
        model.eval()
        expected = [t.numpy() for t in model(*args)]
    path = brt.compile_torch(model, *args, path=str(tmp_path / f"{name}.brtx"))
    got = brt.Session(path).run(*[a.numpy() for a in args])
    assert len(got) == len(expected), f"{name}: brt returns {len(got)} outputs, PyTorch {len(expected)}"
    for output, g, e in zip(model.outputs, got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, \
            f"{name} {output}: brt gives {g.dtype}{g.shape}, PyTorch {e.dtype}{e.shape}"
        assert np.abs(e).max() > 0, f"{name} {output}: PyTorch's output is all zeros, which proves nothing"
        error = relative_l2(g, e)
        assert error <= MAX_RELATIVE_L2, f"{name} {output}: relative L2 error {error:.3g} > {MAX_RELATIVE_L2}"
