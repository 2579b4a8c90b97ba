/* The compiled BPF programs (vsgen.bpf.o), embedded so that the engine is one file. */
	.section .rodata
	.global vsg_bpf_obj
	.global vsg_bpf_obj_end
	.balign 8
vsg_bpf_obj:
	.incbin VSG_BPF_OBJ
vsg_bpf_obj_end:
	.section .note.GNU-stack,"",@progbits
