"""An LSTM encoder-decoder with attention: the recurrent baseline of the SCAN / COGS papers.

:class:`LSTMSeq2SeqForConditionalGeneration` (registered with ``AutoModelForSeq2SeqLM``): a
bidirectional LSTM encoder and an LSTM decoder with input feeding and Luong attention (Lake & Baroni
2018; Kim & Linzen 2020), trained on the scratch Transformers' batches; ``generate`` decodes greedily.
Its training dynamics tell wrong targets apart (docs/training-dynamics.md).

Example:
    >>> from hf_synthsample.models import build_scratch_model, build_word_tokenizer
    >>> tok = build_word_tokenizer(["jump twice", "I_JUMP I_JUMP"])
    >>> model = build_scratch_model(tok, "lstm", hidden_size=16, embedding_dim=8)
    >>> batch = tok(["jump twice"], return_tensors="pt")
    >>> out = model(**batch, labels=tok(["I_JUMP I_JUMP"], return_tensors="pt")["input_ids"])
    >>> tuple(out.logits.shape[:2]), out.loss.ndim
    ((1, 3), 0)
    >>> model.generate(**batch, max_new_tokens=4).shape[0]
    1
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import AutoConfig, AutoModelForSeq2SeqLM, PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import Seq2SeqLMOutput

from ..validation import check_int
from ._padding import right_padded_lengths

__all__ = ["LSTMSeq2SeqConfig", "LSTMSeq2SeqForConditionalGeneration"]


class LSTMSeq2SeqConfig(PretrainedConfig):
    """Config of :class:`LSTMSeq2SeqForConditionalGeneration`: ``hidden_size`` is the decoder's (each
    encoder direction has half), ``num_layers`` the encoder's and the decoder's, ``dropout`` on the
    embeddings and before the output layer."""

    model_type = "hf_synthsample_lstm_seq2seq"

    vocab_size: int = 32
    embedding_dim: int = 128
    hidden_size: int = 128
    num_layers: int = 1
    dropout: float = 0.1
    pad_token_id: int | None = 0
    bos_token_id: int | None = 1
    eos_token_id: int | None = 2
    decoder_start_token_id: int | None = 1
    is_encoder_decoder: bool = True
    tie_word_embeddings: bool = False


class LSTMSeq2SeqForConditionalGeneration(PreTrainedModel):
    """Bidirectional LSTM encoder -> attentional LSTM decoder -> vocabulary logits."""

    config_class = LSTMSeq2SeqConfig
    base_model_prefix = "lstm_seq2seq"
    main_input_name = "input_ids"

    def __init__(self, config: LSTMSeq2SeqConfig):
        super().__init__(config)
        h, e = config.hidden_size, config.embedding_dim
        if h % 2:
            raise ValueError(f"hidden_size must be even (each encoder direction has hidden_size // 2), got {h}")
        self.source_embeddings = nn.Embedding(config.vocab_size, e, padding_idx=config.pad_token_id)
        self.target_embeddings = nn.Embedding(config.vocab_size, e, padding_idx=config.pad_token_id)
        self.encoder = nn.LSTM(e, h // 2, num_layers=config.num_layers, batch_first=True, bidirectional=True,
                               dropout=config.dropout if config.num_layers > 1 else 0.0)
        # the decoder's first-layer input is the previous token and the previous attentional state
        self.decoder_cells = nn.ModuleList(
            [nn.LSTMCell(e + h if i == 0 else h, h) for i in range(config.num_layers)])
        self.bridge = nn.Linear(h, h)  # encoder summary -> decoder initial state
        self.attention = nn.Linear(h, h, bias=False)  # Luong "general" score h_t^T W s
        self.combine = nn.Linear(2 * h, h)
        self.dropout = nn.Dropout(config.dropout)
        self.lm_head = nn.Linear(h, config.vocab_size)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        # PyTorch's own initialisation (embeddings N(0, 1), LSTM and linear layers uniform in
        # +-1/sqrt(fan)): with small embeddings (N(0, 0.02), the Transformers' convention) the LSTM's
        # inputs are tiny next to its state and it trains several times slower (models.calculator
        # measured the same for the Calculator LSTM).
        if isinstance(module, (nn.Embedding, nn.Linear, nn.LSTM, nn.LSTMCell)):
            module.reset_parameters()
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            with torch.no_grad():
                module.weight[module.padding_idx].zero_()

    def get_encoder(self):
        return self

    def get_input_embeddings(self) -> nn.Module:
        return self.source_embeddings

    def get_output_embeddings(self) -> nn.Module:
        return self.lm_head

    # ------------------------------------------------------------------------------------ encoder
    def encode(self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None = None):
        """(encoder states ``(batch, length, hidden)``, the attention mask as bool)."""
        mask, lengths = right_padded_lengths(input_ids, attention_mask, self.config.pad_token_id)
        packed = nn.utils.rnn.pack_padded_sequence(self.dropout(self.source_embeddings(input_ids)), lengths.cpu(),
                                                   batch_first=True, enforce_sorted=False)
        states, _ = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True, total_length=input_ids.shape[1])
        return states, mask

    def _initial_state(self, states: torch.Tensor, mask: torch.Tensor):
        """(attention keys, hidden, cells, attentional state) before the first decoder step."""
        maskf = mask.unsqueeze(-1).to(states.dtype)
        summary = torch.tanh(self.bridge((states * maskf).sum(1) / maskf.sum(1)))  # mean of the encoder states
        zeros = torch.zeros_like(summary)  # _step builds new lists, never changes these tensors in place
        return self.attention(states), [summary] * self.config.num_layers, [zeros] * self.config.num_layers, zeros

    def _step(self, token_embedding, hidden, cells, feed, keys, states, mask):
        """One decoder step: new (hidden, cells, attentional state), the vocabulary logits."""
        x = torch.cat([token_embedding, feed], dim=-1)
        new_h, new_c = [], []
        for i, cell in enumerate(self.decoder_cells):
            h, c = cell(x, (hidden[i], cells[i]))
            new_h.append(h)
            new_c.append(c)
            x = self.dropout(h) if i + 1 < len(self.decoder_cells) else h
        scores = torch.bmm(keys, x.unsqueeze(-1)).squeeze(-1).masked_fill(~mask, torch.finfo(x.dtype).min)
        context = torch.bmm(scores.softmax(dim=-1).unsqueeze(1), states).squeeze(1)
        feed = torch.tanh(self.combine(torch.cat([x, context], dim=-1)))
        return new_h, new_c, feed, self.lm_head(self.dropout(feed))

    def _shift_right(self, labels: torch.Tensor) -> torch.Tensor:
        start = self.config.decoder_start_token_id
        if start is None:
            raise ValueError("config.decoder_start_token_id is not set: the decoder needs a start token")
        shifted = labels.new_full(labels.shape, self.config.pad_token_id)
        shifted[:, 1:] = labels[:, :-1]
        shifted[:, 0] = start
        return shifted.masked_fill(shifted == -100, self.config.pad_token_id)

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        labels: torch.LongTensor | None = None,
        encoder_outputs: Any = None,
        return_dict: bool | None = None,
        **kwargs: Any,
    ) -> Seq2SeqLMOutput | tuple:
        """Teacher-forced logits ``(batch, target length, vocab)`` and, with ``labels``, the mean token
        cross-entropy (``-100`` labels ignored), as the ``transformers`` seq2seq models compute it."""
        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("forward needs labels or decoder_input_ids")
            decoder_input_ids = self._shift_right(labels)
        if encoder_outputs is not None:
            states = encoder_outputs[0]
            mask = attention_mask.bool() if attention_mask is not None else torch.ones(
                states.shape[:2], dtype=torch.bool, device=states.device)
        else:
            states, mask = self.encode(input_ids, attention_mask)
        keys, hidden, cells, feed = self._initial_state(states, mask)
        embedded = self.dropout(self.target_embeddings(decoder_input_ids))
        logits = []
        for t in range(decoder_input_ids.shape[1]):
            hidden, cells, feed, step_logits = self._step(embedded[:, t], hidden, cells, feed, keys, states, mask)
            logits.append(step_logits)
        logits = torch.stack(logits, dim=1)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        if not return_dict:
            return (logits,) if loss is None else (loss, logits)
        return Seq2SeqLMOutput(loss=loss, logits=logits, encoder_last_hidden_state=states)

    @torch.no_grad()
    def generate(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        max_new_tokens: int | None = None,
        max_length: int | None = None,
        num_beams: int = 1,
        do_sample: bool = False,
        **kwargs: Any,
    ) -> torch.LongTensor:
        """Greedy decoding: ``(batch, 1 + steps)`` ids starting with the decoder start token, padded after
        each row's eos, as ``transformers``' ``generate`` returns them (no beam search, no sampling)."""
        if num_beams != 1 or do_sample:
            raise ValueError(f"LSTMSeq2SeqForConditionalGeneration.generate decodes greedily only: num_beams must be 1 "
                             f"and do_sample False (got num_beams={num_beams}, do_sample={do_sample})")
        gen = kwargs.get("generation_config")
        if max_new_tokens is None and gen is not None:
            max_new_tokens = getattr(gen, "max_new_tokens", None)
        # as transformers' generate: a limit that leaves no step is an error, not an empty decode
        if max_new_tokens is not None:
            check_int("max_new_tokens", max_new_tokens, min=1)
        elif max_length is not None:
            max_new_tokens = check_int("max_length", max_length, min=2) - 1  # the start token counts
        else:
            max_new_tokens = 128
        states, mask = self.encode(input_ids, attention_mask)
        keys, hidden, cells, feed = self._initial_state(states, mask)
        batch = input_ids.shape[0]
        eos, pad = self.config.eos_token_id, self.config.pad_token_id
        token = input_ids.new_full((batch,), self.config.decoder_start_token_id)
        out = [token]
        done = torch.zeros(batch, dtype=torch.bool, device=input_ids.device)
        for _ in range(max_new_tokens):
            hidden, cells, feed, logits = self._step(self.target_embeddings(token), hidden, cells, feed, keys, states, mask)
            token = logits.argmax(dim=-1).masked_fill(done, pad)
            out.append(token)
            if eos is not None:
                done = done | token.eq(eos)
                if bool(done.all()):
                    break
        return torch.stack(out, dim=1)


AutoConfig.register(LSTMSeq2SeqConfig.model_type, LSTMSeq2SeqConfig, exist_ok=True)
AutoModelForSeq2SeqLM.register(LSTMSeq2SeqConfig, LSTMSeq2SeqForConditionalGeneration, exist_ok=True)
